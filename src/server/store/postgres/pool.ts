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

/** A pool on `url` (postgres://…), its connections typed as above. */
export function createPool(url: string, options: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'govctl',
    types: types as pg.CustomTypesConfig,
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
  if ((typeof code === 'string' && UNAVAILABLE.test(code)) || /Connection terminated|connection.*(closed|ended)|Client has encountered a connection error/i.test(message)) {
    return new DatabaseUnavailableError(`the database is unavailable: ${message}`, { cause: error });
  }
  if (code === '22021' || code === '22P05') return new UnstorableValueError('a text member holds the character U+0000, which cannot be stored', { cause: error });
  return error;
}

/** True when any of `values` holds U+0000: no stored text can, so a read by it finds nothing. */
export function holdsNul(...values: (string | undefined)[]): boolean {
  return values.some((value) => value !== undefined && value.includes('\u0000'));
}

/** What a query runs on: the pool (one statement, any connection) or a checked-out client (a transaction). */
export type Queryable = Pick<pg.ClientBase, 'query'>;
