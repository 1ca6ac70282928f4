/**
 * Connections to PostgreSQL: one pg.Pool per store. bigint columns (epoch ms, positions, counts)
 * come back as numbers rather than pg's default strings: every value the store keeps in them is
 * below 2^53 (milliseconds until the year 287 396; positions far below), and a value that is not is
 * refused loudly rather than rounded.
 */
import pg from 'pg';

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
  /** most connections this process opens (default 10) */
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
  return pool;
}

/** What a query runs on: the pool (one statement, any connection) or a checked-out client (a transaction). */
export type Queryable = Pick<pg.ClientBase, 'query'>;
