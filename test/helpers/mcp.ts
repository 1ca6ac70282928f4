/**
 * `govctl mcp`'s server in this process, linked in memory to the MCP SDK's own client: the tools,
 * resources and errors as a host sees them, without a process or a pipe (the spawned tests in
 * cli/mcp.test.ts cover the stdio and HTTP transports themselves).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createFactory } from '../../src/cli/factory.js';
import { createMemoryIO } from '../../src/cli/io.js';
import { createMcpServer } from '../../src/cli/mcp/server.js';
import { makeHome } from './cli.js';

/** A tool call's result as the SDK's client returns it. */
export type ToolResult = { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: Record<string, unknown> };

/**
 * Connects a client to an MCP server over a factory with `env` (a fresh HOME and XDG directories
 * under it unless `env` names its own), and `sleep` for the client library's waits.
 */
export async function connectMcpInProcess(env: Record<string, string>, options: { sleep?: (ms: number) => Promise<void> } = {}) {
  const home = makeHome();
  const io = createMemoryIO();
  const deps = createFactory({
    io,
    env: { HOME: home, XDG_CONFIG_HOME: `${home}/config`, XDG_DATA_HOME: `${home}/data`, ...env },
    cwd: home,
    globals: () => ({}),
    signal: new AbortController().signal,
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
  const { server } = createMcpServer(deps);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'govctl-test', version: '1.0.0' });
  await client.connect(clientSide);
  return {
    client,
    stderr: () => io.stderrText(),
    call: async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as ToolResult,
    async close() {
      await client.close();
      await deps.close();
    },
  };
}
