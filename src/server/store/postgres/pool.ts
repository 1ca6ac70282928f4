/**
 * Connections to PostgreSQL: one pg.Pool per store. bigint columns (epoch ms, positions, counts)
 * come back as numbers rather than pg's default strings: every value the store keeps in them is
 * below 2^53 (milliseconds until the year 287 396; positions far below), and a value that is not is
 * refused loudly rather than rounded.
 */
import pg from 'pg';
import { DatabaseUnavailableError, UnstorableValueError } from '../errors.js';

const INT8_OID = 20;

function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`bigint ${text} is beyond the integers JavaScript holds exactly`);
  return value;
}

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return parseInt8;
    return (pg.types.getTypeParser as (oid: number, format?: string) => (value: string) => unknown)(oid, format);
  },
};

export interface PoolOptions {
  /** most connections this process opens (default 10, pg's) */
  max?: number;
  /** shown in pg_stat_activity */
  applicationName?: string;
}

/**
 * libpq's `connect_timeout` for `url` (its query parameter, else PGCONNECT_TIMEOUT) in
 * milliseconds, or 0 (wait as long as the network does), read as libpq reads it: whole seconds, at
 * least 2, zero or less for none. pg parses the parameter but acts on it only in its native binding.
 */
export function connectTimeoutMs(url: string, env: NodeJS.ProcessEnv = process.env): number {
  let given: string | null | undefined;
  try {
    given = new URL(url).searchParams.get('connect_timeout');
  } catch {
    given = null; // a URL the WHATWG parser refuses (a host list): pg still takes it
  }
  const seconds = Number.parseInt(given ?? env.PGCONNECT_TIMEOUT ?? '0', 10);
  return Number.isFinite(seconds) && seconds > 0 ? Math.max(seconds, 2) * 1000 : 0;
}

/**
 * pg's client, made to let go of a connection attempt that failed. pg leaves the socket open when
 * it gives up on its own side (a password PostgreSQL asks for and the URL lacks), so the server
 * kept the half-authenticated connection, and the process waiting on it, until its
 * authentication_timeout (a minute by default); and it applies no connect_timeout. Both end here:
 * a failed attempt closes its socket, and one that takes longer than `timeoutMs` fails as
 * ETIMEDOUT (unreachable: 69 in the CLI, 503 in the service).
 */
function closingClient(timeoutMs: number): new () => pg.ClientBase {
  class ClosingClient extends pg.Client {
    override connect(): Promise<pg.Client>;
    override connect(callback: (error: Error | null, client?: pg.Client) => void): void;
    override connect(callback?: (error: Error | null, client?: pg.Client) => void): Promise<pg.Client> | void {
      if (callback === undefined) return super.connect();
      // read when needed: TLS replaces the connection's stream once negotiated
      const connection = (this as unknown as { connection: { stream: { destroy(error?: Error): void } } }).connection;
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              connection.stream.destroy(
                Object.assign(new Error(`no answer from PostgreSQL within connect_timeout (${timeoutMs / 1000} s)`), { code: 'ETIMEDOUT' }),
              );
            }, timeoutMs).unref()
          : undefined;
      super.connect((error: Error | null) => {
        clearTimeout(timer);
        if (error) connection.stream.destroy();
        callback(error, this);
      });
    }
  }
  return ClosingClient;
}

/** A pool on `url` (postgres://…), its connections typed as above. */
export function createPool(url: string, options: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    Client: closingClient(connectTimeoutMs(url)),
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'govctl',
    types: types,
    // an idle connection the database or a pooler has closed is dropped, not an uncaught error
    idleTimeoutMillis: 30_000,
  });
  // A connection that fails (the server restarted, a network cut) emits 'error': while idle in the
  // pool, the pool drops it; while checked out between two statements, the next statement fails
  // and the store releases it as broken. Without these listeners the event would end the process.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  // One statement on any connection (the store's reads): its failure as the store's error.
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  (pool as { query: unknown }).query = (...args: unknown[]) =>
    query(...args).catch((error: unknown) => {
      throw storeError(error);
    });
  // (pg's own query calls connect with a callback: that form passes through untouched)
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => Promise<pg.PoolClient> | undefined;
  (pool as { connect: unknown }).connect = (...args: unknown[]) =>
    args.length > 0
      ? connect(...args)
      : connect()!.catch((error: unknown) => {
          throw storeError(error);
        });
  return pool;
}

/** Error codes of a connection that failed or a server that is going away (network, 08xxx, 57P0x). */
const UNAVAILABLE = /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|08...|57P0[1-3])$/;

/**
 * The store's error for a driver error the service answers specifically: the database unavailable
 * (503) or a text PostgreSQL cannot hold (U+0000: 22021, 22P05; 422); anything else unchanged.
 */
export function storeError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const message = (error as Error | null)?.message ?? '';
  if (
    (typeof code === 'string' && UNAVAILABLE.test(code)) ||
    /Connection terminated|connection.*(closed|ended)|Client has encountered a connection error/i.test(message)
  ) {
    return new DatabaseUnavailableError(`the database is unavailable: ${message}`, { cause: error });
  }
  if (code === '22021' || code === '22P05')
    return new UnstorableValueError('a text member holds the character U+0000, which cannot be stored', { cause: error });
  return error;
}

/** True when any of `values` holds U+0000: no stored text can, so a read by it finds nothing. */
export function holdsNul(...values: (string | undefined)[]): boolean {
  return values.some((value) => value !== undefined && value.includes('\u0000'));
}

/** What a query runs on: the pool (one statement, any connection) or a checked-out client (a transaction). */
export type Queryable = Pick<pg.ClientBase, 'query'>;
