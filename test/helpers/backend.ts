/**
 * The backend a test's store, app or server uses, decided in one place. vitest.config.ts runs the
 * service suite (test/server/*.test.ts) twice: on SQLite in the `default` project and on
 * PostgreSQL in `server-postgres`, which sets GOVCTL_TEST_BACKEND=postgres. Every test that builds
 * a store, an app or a server takes its location from {@link testStoreLocation}; a test of a
 * mechanism only SQLite has skips on PostgreSQL with `describe.skipIf(sqliteOnly)`, saying why.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { isPostgresLocation } from '../../src/server/store/location.js';
import { freshMigratedDatabase } from './postgres.js';

/** `postgres` under GOVCTL_TEST_BACKEND=postgres (the `server-postgres` project), else `sqlite`. */
export function testBackend(): 'sqlite' | 'postgres' {
  return process.env.GOVCTL_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';
}

/** True in the PostgreSQL run: for `describe.skipIf` on tests of mechanisms only SQLite has. */
export const sqliteOnly = testBackend() === 'postgres';

/**
 * A new, empty store location on the test backend: a fresh database on the run's PostgreSQL
 * cluster, or a SQLite file `govctl.db` in `dir` (default: a new temporary directory).
 * `label` names the PostgreSQL database, to find it in the cluster's log.
 */
export async function testStoreLocation(label = 'test', dir?: string): Promise<string> {
  if (testBackend() === 'postgres') return freshMigratedDatabase(label);
  return join(dir ?? mkdtempSync(join(tmpdir(), 'govctl-store-')), 'govctl.db');
}

/** int8 (counts, ms) as numbers, as better-sqlite3 gives them: both backends then compare alike. */
const numericTypes = {
  getTypeParser: ((oid: number, format?: string) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format as never))) as typeof pg.types.getTypeParser,
};

/**
 * The rows `sql` (with `?` placeholders) reads from the stored tables at `location`, on either
 * backend: both keep the same tables and columns (store/sqlite/schema.sql, store/postgres/schema.sql),
 * so a test that checks what was stored (a witness form, a tier, that a row exists once) checks
 * it on both. Only portable SQL here; SQLite's own functions belong in SQLite-only tests.
 */
export async function storedRows<T = Record<string, unknown>>(location: string, sql: string, params: unknown[] = []): Promise<T[]> {
  if (isPostgresLocation(location)) {
    let n = 0;
    const text = sql.replace(/\?/g, () => `$${++n}`);
    const client = new pg.Client({ connectionString: location, types: numericTypes });
    await client.connect();
    try {
      return (await client.query(text, params)).rows as T[];
    } finally {
      await client.end();
    }
  }
  const db = new Database(location, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** The one row `sql` reads ({@link storedRows}), or undefined. */
export async function storedRow<T = Record<string, unknown>>(location: string, sql: string, params: unknown[] = []): Promise<T | undefined> {
  return (await storedRows<T>(location, sql, params))[0];
}

/**
 * Runs a statement (with `?` placeholders) on the stored tables at `location`, behind the service's
 * back, on either backend: what a tamper test does to the database. Only portable SQL here.
 */
export async function changeStoredRows(location: string, sql: string, params: unknown[] = []): Promise<void> {
  if (isPostgresLocation(location)) {
    let n = 0;
    const text = sql.replace(/\?/g, () => `$${++n}`);
    const client = new pg.Client({ connectionString: location });
    await client.connect();
    try {
      await client.query(text, params);
    } finally {
      await client.end();
    }
    return;
  }
  const db = new Database(location);
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}
