/**
 * `govctl serve`'s service: the application listening on a host and port, one JSON log line per
 * request, and a graceful close that finishes in-flight requests and commits every queued write
 * before the database closes. The signals that call it are src/cli/serve/serve.ts's.
 */
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { createApp, type AppLedgerOptions, type ServiceApp } from './app.js';
import type { LogLine } from './errors.js';
import type { ServiceLimits } from './limits.js';
import type { SigningKey } from '../core/signing/keys.js';
import { displayLocation } from './store/location.js';
import { claimForServing } from './store/open-store.js';

export interface ServerOptions {
  /** default 127.0.0.1 */
  host?: string;
  /** default 8080; 0 picks a free port */
  port?: number;
  /** the database file */
  db: string;
  /** where log lines go, one JSON object each (stderr in `govctl serve`); default nowhere */
  logLine?: LogLine;
  /** requests per minute per workspace (default 2000); the same as `limits.requestsPerMinute` */
  rateLimitPerMinute?: number;
  /** budgets, caps and timeouts (limits.ts; each defaults to DEFAULT_LIMITS) */
  limits?: Partial<ServiceLimits>;
  /** the budgets' clock, epoch ms (default Date.now) */
  budgetNowMs?: () => number;
  /** worker threads for batch signatures (default: one fewer than the cores, at least 0) */
  verifyWorkers?: number;
  now?: () => Date;
  /** the transparency log: its key, origin prefix and integration (app.ts) */
  ledger?: AppLedgerOptions;
  /** the key that signs gate verdicts (verdict-key.ts); without it signing a verdict answers 503 */
  verdictKey?: SigningKey | null;
}

export interface RunningServer {
  /** e.g. `http://127.0.0.1:8080` */
  url: string;
  /** stops accepting connections, lets in-flight requests finish, commits queued writes, closes the database; safe to call twice */
  close(): Promise<void>;
  /** the application, for tests */
  service: ServiceApp;
}

export const DEFAULT_HOST = '127.0.0.1';

/**
 * Verify workers by default: one fewer than the cores, so that the request thread keeps a core
 * (docs/decisions.md); none on one core.
 */
export function defaultVerifyWorkers(): number {
  return Math.max(0, availableParallelism() - 1);
}
export const DEFAULT_PORT = 8080;

function logEvent(logLine: LogLine, fields: Record<string, unknown>): void {
  logLine(JSON.stringify({ level: 'info', time: new Date().toISOString(), ...fields }));
}

/**
 * Starts the service.
 *
 * @example
 * const server = await startServer({ db: 'govctl.db', port: 8080, logLine: (line) => process.stderr.write(line + '\n') });
 * process.once('SIGTERM', () => void server.close());
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const logLine = options.logLine ?? (() => {});
  // Refused before anything is opened: a database this process cannot write, or one another
  // `govctl serve` is running on (store/open-store.ts).
  const lock = claimForServing(options.db);
  let service: ServiceApp;
  try {
    service = await createApp({
      db: options.db,
      logLine,
      ...(options.rateLimitPerMinute !== undefined ? { rateLimitPerMinute: options.rateLimitPerMinute } : {}),
      ...(options.limits !== undefined ? { limits: options.limits } : {}),
      ...(options.budgetNowMs !== undefined ? { budgetNowMs: options.budgetNowMs } : {}),
      ...(options.now !== undefined ? { now: options.now } : {}),
      verifyWorkers: options.verifyWorkers ?? defaultVerifyWorkers(),
      ...(options.ledger !== undefined ? { ledger: options.ledger } : {}),
      ...(options.verdictKey ? { verdictKey: options.verdictKey } : {}),
    });
  } catch (error) {
    lock.release();
    throw error;
  }
  try {
    await service.app.listen({ host: options.host ?? DEFAULT_HOST, port: options.port ?? DEFAULT_PORT });
  } catch (error) {
    await service.close();
    lock.release();
    throw error;
  }
  const address = service.app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  // a PostgreSQL URL's password never reaches a log
  logEvent(logLine, { msg: 'listening', url, db: displayLocation(options.db), verify_workers: service.verifyWorkers });

  let closing: Promise<void> | undefined;
  return {
    url,
    service,
    close() {
      closing ??= closeGracefully(service)
        .finally(() => lock.release())
        .then(() => logEvent(logLine, { msg: 'stopped' }));
      return closing;
    },
  };
}

/** How often idle connections are swept during a shutdown. */
const IDLE_SWEEP_MS = 20;

/**
 * Closes without dropping requests that have arrived. Node's `server.close()` destroys every
 * connection that is not serving a request at that instant, including one whose request bytes sit
 * unread in its buffer; so the immediate sweep is replaced by one every few milliseconds: by the
 * next sweep such a request is being served (and its response, marked `Connection: close`, ends
 * the connection), while connections that really are idle are closed.
 */
async function closeGracefully(service: ServiceApp): Promise<void> {
  const server = service.app.server;
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {};
  const sweep = setInterval(closeIdle, IDLE_SWEEP_MS);
  try {
    await service.close();
  } finally {
    clearInterval(sweep);
    server.closeIdleConnections = closeIdle;
  }
}
