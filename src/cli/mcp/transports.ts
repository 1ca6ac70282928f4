/**
 * How `govctl mcp` talks to its host: stdio (the default: the host spawns it; stdout carries the
 * protocol and nothing else, notices go to stderr), or Streamable HTTP with `--http PORT`
 * (stateless: one server per request; on 127.0.0.1 unless `--host` says otherwise, and then
 * Host and Origin headers are checked so a web page cannot reach it through DNS rebinding).
 * Both run until the host hangs up, SIGTERM, or Ctrl-C, and then end with exit code 0.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { redact } from '../../client/errors.js';
import { ConfigError, describeError, oneLine, UsageError } from '../errors.js';
import { resolveConnection, type Factory } from '../factory.js';
import { displayUrl } from '../terminal-text.js';
import { createMcpServer, prepareTools, secretsOf } from './server.js';

/** Resolves once SIGTERM arrives or the run's signal (Ctrl-C) aborts. */
function stopRequested(deps: Factory): { stopped: Promise<void>; dispose(): void } {
  let resolveStop!: () => void;
  const stopped = new Promise<void>((resolve) => (resolveStop = resolve));
  const onTerm = () => resolveStop();
  process.once('SIGTERM', onTerm);
  if (deps.signal.aborted) resolveStop();
  else deps.signal.addEventListener('abort', () => resolveStop(), { once: true });
  return { stopped, dispose: () => process.off('SIGTERM', onTerm) };
}

/**
 * Marks every request of this run as an agent's (`X-Govctl-Source: agent`, stored as the record's
 * `source`, which the service accepts as one of its sources), so an auditor can tell what an agent
 * wrote from what a person typed.
 */
function markAgentSource(deps: Factory): void {
  deps.requestSource = 'agent';
}

/** Loads the settings once at start, so that a configuration problem shows in the host's log at once. */
async function announce(deps: Factory, where: string): Promise<void> {
  try {
    const settings = await deps.settings();
    // The factory's own rule for where requests go, so that its configuration errors show here too.
    const connection = resolveConnection(settings, deps.env);
    // As every notice shows a base URL: without its userinfo or query (docs/security.md).
    const target = connection.kind === 'remote' ? displayUrl(connection.baseUrl) : 'the local store';
    await deps.note(
      `mcp: serving ${where} for ${target}${settings.systemName ? `, system ${settings.systemName}` : ''}${settings.hasSigningKey ? ', signing' : ''}`,
    );
  } catch (error) {
    // Not fatal: every tool call reports the same problem, with what to do, to the agent.
    await deps.note(
      redact(`mcp: warning: the settings do not load (${oneLine(describeError(error).message)}); every tool will report it`, await secretsOf(deps)),
    );
  }
}

/** Serves MCP over the process's stdin and stdout until the host closes stdin. */
export async function serveStdio(deps: Factory): Promise<void> {
  // stdin is the protocol's: `--api-key-file -` cannot have it (a usage error, not a hang).
  if (deps.globals.apiKeyFile === '-' || deps.globals.signingKeyFile === '-') {
    throw new UsageError('govctl mcp reads the protocol from stdin, so a key cannot come from stdin', {
      field: deps.globals.apiKeyFile === '-' ? '--api-key-file' : '--signing-key-file',
      hint: "give the key file by name, or set SERVICE_API_KEY / SERVICE_SIGNING_KEY in the host's configuration",
    });
  }
  deps.claimStdin('the MCP protocol (stdio)');
  markAgentSource(deps);
  await announce(deps, 'stdio');
  const mcp = createMcpServer(deps);
  const { server } = mcp;
  const transport = new StdioServerTransport(process.stdin, process.stdout);
  const stop = stopRequested(deps);
  const hungUp = new Promise<'hung-up'>((resolve) => {
    server.onclose = () => resolve('hung-up');
    process.stdin.once('end', () => resolve('hung-up'));
    process.stdin.once('close', () => resolve('hung-up'));
  });
  await server.connect(transport);
  try {
    // stdin closed: answer what was asked, then end. A signal ends at once.
    if ((await Promise.race([hungUp, stop.stopped])) === 'hung-up') await Promise.race([mcp.settled(), stop.stopped]);
  } finally {
    stop.dispose();
    await server.close().catch(() => undefined);
  }
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** Options of {@link serveHttp}. */
export interface HttpOptions {
  host: string;
  port: number;
  /** told the URL once listening (tests read it from stderr) */
  onListening?: (url: string) => void;
}

/** Serves MCP over Streamable HTTP at `http://HOST:PORT/mcp` until SIGTERM or Ctrl-C. */
export async function serveHttp(deps: Factory, options: HttpOptions): Promise<void> {
  markAgentSource(deps);
  const tools = prepareTools();
  const loopback = LOOPBACK.has(options.host);
  let allowedHosts: string[] = [];
  let allowedOrigins: string[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/mcp') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not_found', message: 'the MCP endpoint is /mcp' }));
      return;
    }
    // A browser page may send requests here; only same-origin pages of this server may, on any
    // address: a browser always names the page's origin on a POST, and an agent's client names
    // none. On another address the Host cannot be checked (its names are the machine's), so this
    // is what keeps a page, rebound by DNS to this address or not, from acting with the keys.
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.includes(origin)) {
      // the Origin is not repeated: a reply carries nothing the sender chose
      res.writeHead(403, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: 'forbidden',
          message: 'the request names an Origin other than this server: only its own pages and clients that send no Origin may use it',
        }),
      );
      return;
    }
    // Stateless (a server per request): no stream the server could write to later (GET) and no
    // session to end (DELETE). The specification's answer to both is 405; a GET answered with an
    // event stream would hold its connection open with nothing ever sent on it.
    if (req.method !== 'POST') {
      res
        .writeHead(405, { allow: 'POST', 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'method_not_allowed', message: `${req.method ?? 'this method'} is not served here: send JSON-RPC messages with POST` }));
      return;
    }
    const { server } = createMcpServer(deps, tools);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      ...(loopback ? { enableDnsRebindingProtection: true, allowedHosts } : {}),
    });
    res.on('close', () => {
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };

  const http = createServer((req, res) => {
    handle(req, res).catch(async (error: unknown) => {
      await deps.note(`mcp: request failed: ${(error as Error).message}`).catch(() => undefined);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'internal_error' }));
      else res.end();
    });
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new ConfigError(`cannot listen on ${options.host}:${options.port}: the port is in use`, {
              field: '--http',
              hint: 'give another port (0 picks a free one)',
            })
          : error.code === 'EACCES' || error.code === 'EPERM'
            ? new ConfigError(`cannot listen on ${options.host}:${options.port}: permission denied`, { field: '--http', hint: 'use a port above 1023' })
            : new ConfigError(`cannot listen on ${options.host}:${options.port}: ${error.message}`, { field: '--host', hint: 'give --host 127.0.0.1' }),
      );
    });
    http.listen(options.port, options.host, () => resolve());
  });
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const shownHost = options.host.includes(':') && !options.host.startsWith('[') ? `[${options.host}]` : options.host;
  allowedHosts = [`${shownHost}:${port}`, `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`];
  allowedOrigins = allowedHosts.map((host) => `http://${host}`);
  const url = `http://${shownHost}:${port}/mcp`;

  await announce(deps, url);
  if (!loopback) {
    await deps.note(`mcp: warning: listening on ${options.host}, not loopback: anyone who can reach it acts with the configured API key and signing key`);
  }
  await deps.note(`listening on ${url}`);
  options.onListening?.(url);

  const stop = stopRequested(deps);
  try {
    await stop.stopped;
  } finally {
    stop.dispose();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  }
}
