/**
 * Creating the PostgreSQL store's schema (schema.sql beside this file) in an empty database.
 *
 * Several replicas may start at once on one database: {@link migrate} runs in one transaction under
 * a transaction-level advisory lock (released at COMMIT, so it is safe behind a transaction-mode
 * pooler), and reads the version again once it holds the lock.
 */
import type pg from 'pg';
import { SchemaVersionError } from '../errors.js';
import SCHEMA_SQL from './schema.sql';

/** The schema version schema.sql creates, kept in schema_migrations. */
export const SCHEMA_VERSION = 1;

/** The advisory lock key the schema is created under ('govctl' in ASCII). */
const MIGRATION_LOCK = 0x676f7663746c;

/**
 * Creates the schema when the database has none; a database of the current version is left as it
 * is, and any other version is refused, changing nothing.
 * @returns the versions applied: `[1]` when the schema was created, `[]` when it was there
 * @throws SchemaVersionError when the database holds a version this code does not know
 */
export async function migrate(client: pg.ClientBase): Promise<number[]> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    const { rows: found } = await client.query<{ exists: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS exists");
    let current = 0;
    if (found[0]?.exists) {
      const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
      current = rows[0]?.v ?? 0;
    }
    if (current !== 0 && current !== SCHEMA_VERSION) {
      throw new SchemaVersionError(
        `the database has schema version ${current}, which this govctl does not know (it writes version ${SCHEMA_VERSION}); use the govctl that created it`,
      );
    }
    const applied: number[] = [];
    if (current === 0) {
      await client.query(SCHEMA_SQL);
      await client.query("INSERT INTO schema_migrations (version, name, applied_ms) VALUES ($1, 'baseline', $2)", [SCHEMA_VERSION, Date.now()]);
      applied.push(SCHEMA_VERSION);
    }
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
