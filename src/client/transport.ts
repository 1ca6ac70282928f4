/**
 * The transport: how one HTTP exchange happens. The client library talks to a {@link Transport},
 * so the same code runs over the network ({@link createHttpTransport}) and in-process against the
 * embedded store (the server provides that transport; docs/architecture.md).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { ConfigError, NetworkError } from './errors.js';

/** One request as the client library sends it. */
export interface TransportRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /** path and query string, e.g. `/api/workspaces/ws_1/governance/grc/evidence?dry_run=true` */
  path: string;
  /** request headers; names in lower case */
  headers: Record<string, string>;
  /** the JSON text of the body, if any */
  body?: string;
}

/** One reply. */
export interface TransportResponse {
  status: number;
  /** reply headers; names in lower case */
  headers: Record<string, string | string[] | undefined>;
  /** the body as text (the client parses it losslessly) */
  body: string;
  /** the body's bytes, for binary replies (the transparency log's tiles); transports that have them set them */
  bytes?: Buffer;
}

/**
 * Carries requests to the service. A transport either returns a reply (whatever its status) or
 * throws (nothing came back: unreachable, timed out, aborted); `createHttpTransport` throws
 * {@link NetworkError}, and the client wraps anything else a transport throws in one.
 */
export interface Transport {
  request(request: TransportRequest, signal?: AbortSignal): Promise<TransportResponse>;
  /** releases connections; further requests fail */
  close?(): Promise<void>;
  /** a description for traces and messages, e.g. the base URL (optional) */
  readonly description?: string;
}

/** Options of {@link createHttpTransport}. */
export interface HttpTransportOptions {
  /**
   * Per-attempt timeout in ms, covering connect, headers and body. The specification fixes it at
   * 15 s (docs/library.md "Settings"); the option exists for the library's own tests. Default 15 000.
   * @internal
   */
  timeoutMs?: number;
  /** how long an idle keep-alive connection stays open, in ms (default 30 000) */
  keepAliveTimeoutMs?: number;
  /** overrides for the proxy settings otherwise read from the environment (HTTP_PROXY, HTTPS_PROXY, NO_PROXY) */
  proxy?: { httpProxy?: string; httpsProxy?: string; noProxy?: string };
}

/** The fixed client network timeout (docs/library.md "Settings"). */
export const DEFAULT_TIMEOUT_MS = 15_000;

/** Parses and checks a base URL: http or https, no query or fragment; the path becomes a prefix. */
export function parseBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ConfigError(`base URL "${baseUrl}" is not a URL; give one like https://governance.example.com (option baseUrl or SERVICE_BASE_URL)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`base URL must start with http:// or https:// (got ${url.protocol}); set baseUrl or SERVICE_BASE_URL`);
  }
  if (url.username || url.password) throw new ConfigError('base URL must not contain credentials; the API key goes in apiKey or SERVICE_API_KEY');
  url.search = '';
  url.hash = '';
  return url;
}

/**
 * An HTTP(S) transport: keep-alive connections through node:http(s), or undici through the proxy from
 * `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` (and their lower-case forms, read when the transport is
 * created), and a per-attempt timeout of 15 s after which the attempt fails with a
 * {@link NetworkError} whose `timedOut` is true.
 *
 * @param baseUrl the service's address; a path in it (`https://host/governance`) prefixes every request
 * @example
 * const transport = createHttpTransport('https://governance.example.com');
 * const reply = await transport.request({ method: 'GET', path: '/api/me', headers: { authorization: `Bearer ${key}` } });
 * await transport.close();
 * @throws ConfigError when baseUrl is not an http(s) URL
 */
export function createHttpTransport(baseUrl: string, options: HttpTransportOptions = {}): Transport {
  const base = parseBaseUrl(baseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  const origin = base.origin;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const keepAliveTimeout = options.keepAliveTimeoutMs ?? 30_000;
  // A proxy needs undici's EnvHttpProxyAgent (CONNECT tunnels, NO_PROXY matching); a direct
  // connection goes through node:http(s), which costs a fraction of undici's load time at the
  // start of every CLI command (docs/decisions.md, "Start-up: one loader, two bundles, lazily initialised").
  const exchange: Exchange = proxyConfigured(options.proxy)
    ? createUndiciExchange(keepAliveTimeout, options.proxy)
    : createNodeExchange(base.protocol === 'https:', keepAliveTimeout);
  let closed = false;

  async function request(req: TransportRequest, signal?: AbortSignal): Promise<TransportResponse> {
    const where = `${req.method} ${origin}${prefix}${req.path.split('?')[0]}`;
    if (closed) throw new NetworkError('client_closed', `${where}: the client is closed`);
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) controller.abort();
    try {
      return await exchange.send(origin + prefix + req.path, req, controller.signal);
    } catch (error) {
      if (timedOut) {
        throw new NetworkError('timeout', `${where}: no reply within ${timeoutMs / 1000} s (the client timeout)`, { timedOut: true, cause: error });
      }
      if (signal?.aborted) throw new NetworkError('network_error', `${where}: aborted`, { cause: error });
      throw new NetworkError('network_error', `${where}: cannot reach the service (${describeNetworkError(error)})`, { cause: error });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  return {
    description: `${origin}${prefix}`,
    request,
    async close() {
      if (closed) return;
      closed = true;
      await exchange.close();
    },
  };
}

/** One way of carrying an exchange: node:http(s) directly, or undici through a proxy. */
interface Exchange {
  send(url: string, req: TransportRequest, signal: AbortSignal): Promise<TransportResponse>;
  close(): Promise<void>;
}

const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'] as const;

/** Whether a proxy is set in the options or the environment (NO_PROXY is then undici's to apply). */
function proxyConfigured(proxy: HttpTransportOptions['proxy']): boolean {
  if (proxy) return Boolean(proxy.httpProxy || proxy.httpsProxy);
  return PROXY_VARIABLES.some((name) => Boolean(process.env[name]));
}

function createNodeExchange(secure: boolean, keepAliveTimeout: number): Exchange {
  // Only the module the base URL needs: loading node:https (TLS) for an http:// service would
  // cost more than the request.
  const loading = (secure ? import('node:https') : import('node:http')).then((http) => ({
    send: http.request,
    agent: new http.Agent({ keepAlive: true, timeout: keepAliveTimeout }),
  }));
  return {
    async send(url, req, signal) {
      const { send, agent } = await loading;
      return new Promise<TransportResponse>((resolve, reject) => {
        // The signal is not given to http.request: on Node 20 a signal on a keep-alive socket keeps
        // about a kilobyte per request alive (an import of 100 000 records grew by 100 MB).
        const outgoing = send(url, { method: req.method, headers: req.headers, agent }, (reply) => {
          const chunks: Buffer[] = [];
          reply.on('data', (chunk: Buffer) => chunks.push(chunk));
          reply.on('error', fail);
          reply.on('end', () => {
            signal.removeEventListener('abort', abort);
            const bytes = Buffer.concat(chunks);
            resolve({ status: reply.statusCode ?? 0, headers: replyHeaders(reply.headers), body: bytes.toString('utf8'), bytes });
          });
        });
        function fail(error: unknown): void {
          signal.removeEventListener('abort', abort);
          reject(error);
        }
        function abort(): void {
          outgoing.destroy(new Error('aborted'));
        }
        outgoing.on('error', fail);
        if (signal.aborted) abort();
        else signal.addEventListener('abort', abort, { once: true });
        outgoing.end(req.body);
      });
    },
    async close() {
      (await loading).agent.destroy();
    },
  };
}

function replyHeaders(headers: IncomingHttpHeaders): Record<string, string | string[] | undefined> {
  return headers;
}

function createUndiciExchange(keepAliveTimeout: number, proxy: HttpTransportOptions['proxy']): Exchange {
  // Loaded on first use: undici costs tens of milliseconds to load, which only a proxy needs.
  const loading = import('undici').then((undici) => ({
    request: undici.request,
    dispatcher: new undici.EnvHttpProxyAgent({ keepAliveTimeout, ...(proxy ?? {}) }),
  }));
  return {
    async send(url, req, signal) {
      const { request, dispatcher } = await loading;
      const reply = await request(url, { method: req.method, headers: req.headers, body: req.body, dispatcher, signal });
      // Reading the whole body also hands the socket back to the keep-alive pool. The pool hears
      // that the connection is free only in a later microtask; yielding once lets the next request
      // reuse it instead of opening a second connection.
      const bytes = Buffer.from(await reply.body.arrayBuffer());
      await new Promise<void>((resolve) => setImmediate(resolve));
      return { status: reply.statusCode, headers: reply.headers, body: bytes.toString('utf8'), bytes };
    },
    async close() {
      const { dispatcher } = await loading;
      await dispatcher.close();
    },
  };
}

function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${typeof code === 'string' ? `${code} ` : ''}${error.message}${cause}`.trim();
  }
  return String(error);
}
