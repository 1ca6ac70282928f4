/**
 * The transport: how one HTTP exchange happens. The client library talks to a {@link Transport},
 * so the same code runs over the network ({@link createHttpTransport}) and in-process against the
 * embedded store (the server provides that transport; docs/architecture.md).
 */
import { EnvHttpProxyAgent, request as undiciRequest } from 'undici';
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
   * 15 s (spec §8); the option exists for the library's own tests. Default 15 000.
   * @internal
   */
  timeoutMs?: number;
  /** how long an idle keep-alive connection stays open, in ms (default 30 000) */
  keepAliveTimeoutMs?: number;
  /** overrides for the proxy settings otherwise read from the environment (HTTP_PROXY, HTTPS_PROXY, NO_PROXY) */
  proxy?: { httpProxy?: string; httpsProxy?: string; noProxy?: string };
}

/** The fixed client network timeout (spec §8). */
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
 * An HTTP(S) transport on undici: keep-alive connections (one pool per origin), the proxy from
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
  const dispatcher = new EnvHttpProxyAgent({
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
    ...(options.proxy ?? {}),
  });
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
      const reply = await undiciRequest(origin + prefix + req.path, {
        method: req.method,
        headers: req.headers,
        body: req.body,
        dispatcher,
        signal: controller.signal,
      });
      // Reading the whole body also hands the socket back to the keep-alive pool. The pool hears
      // that the connection is free only in a later microtask; yielding once lets the next request
      // reuse it instead of opening a second connection.
      const body = await reply.body.text();
      await new Promise<void>((resolve) => setImmediate(resolve));
      return { status: reply.statusCode, headers: reply.headers, body };
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
      await dispatcher.close();
    },
  };
}

/** A short reason for a failed connection: the system error code and message, never headers. */
function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${typeof code === 'string' ? `${code} ` : ''}${error.message}${cause}`.trim();
  }
  return String(error);
}
