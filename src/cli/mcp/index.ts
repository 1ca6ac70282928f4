/**
 * `govctl mcp`: the agent-tool server (docs/mcp.md). The Model Context Protocol over stdio, or
 * Streamable HTTP with `--http PORT`, with the same settings as every other command.
 */
import { Command, Option } from 'commander';
import { addExamples, markWindsDown, wholeNumber } from '../command-kit.js';
import { UsageError } from '../errors.js';
import type { Factory } from '../factory.js';

export interface McpOptions {
  /** serve Streamable HTTP on this port (0 picks a free one); stdio when absent */
  http?: number;
  /** the address to listen on with `--http` (default 127.0.0.1) */
  host?: string;
}

export function createMcpCommand(factory: Factory): Command {
  const command = new Command('mcp')
    .description('serve the govctl tools to AI agents over the Model Context Protocol (stdio, or HTTP with --http)')
    .addOption(
      new Option('--http <port>', 'serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (0 picks a free port)').argParser(
        wholeNumber('--http', { min: 0, max: 65535 }),
      ),
    )
    .addOption(new Option('--host <host>', 'the address to listen on with --http (default 127.0.0.1)'))
    .action(async (flags: McpOptions) => run(flags, factory));
  markWindsDown(command);
  command.addHelpText(
    'after',
    '\nWith stdio, stdout carries the protocol only; notices and one line per tool call go to stderr.\n' +
      'Settings (service, API key, workspace, system, signing key) are those of every command; with none, the local store.\n' +
      'Tools, resources, prompts and host configuration: docs/mcp.md.\n',
  );
  return addExamples(command, ['govctl mcp', 'claude mcp add govctl -- npx govctl --api-key-file ~/.config/govctl/api-key mcp', 'govctl mcp --http 8765']);
}

export async function run(options: McpOptions, deps: Factory): Promise<void> {
  if (options.host !== undefined && options.http === undefined) {
    throw new UsageError('--host goes with --http PORT', { field: '--host', hint: 'add --http PORT, or drop --host for stdio' });
  }
  const { serveHttp, serveStdio } = await import('./transports.js');
  if (options.http === undefined) return serveStdio(deps);
  return serveHttp(deps, { host: options.host ?? '127.0.0.1', port: options.http });
}
