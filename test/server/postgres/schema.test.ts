/**
 * The PostgreSQL schema: creating it in an empty database yields exactly schema.sql, replicas
 * starting at once create it once, and a database of a version this code does not know is refused.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { SchemaVersionError } from '../../../src/server/store/errors.js';
import { migrate, SCHEMA_VERSION } from '../../../src/server/store/postgres/migrate.js';
import { freshDatabase, withClient } from '../../helpers/postgres.js';

const SCHEMA_SQL = readFileSync(new URL('../../../src/server/store/postgres/schema.sql', import.meta.url), 'utf8');

/** Every table's columns, every index, constraint and function, as the catalog describes them. */
async function catalog(url: string): Promise<unknown> {
  return withClient(url, async (client) => {
    const columns = await client.query(
      `SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity, identity_generation
       FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
    );
    const indexes = await client.query("SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY tablename, indexname");
    const constraints = await client.query(
      `SELECT c.conrelid::regclass::text AS table_name, c.conname, pg_get_constraintdef(c.oid) AS def
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'public' ORDER BY 1, 2`,
    );
    // a function's text as written, its indentation aside
    const functions = await client.query(
      "SELECT p.proname, regexp_replace(pg_get_functiondef(p.oid), '\\s+', ' ', 'g') AS def FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace ORDER BY 1",
    );
    return { columns: columns.rows, indexes: indexes.rows, constraints: constraints.rows, functions: functions.rows };
  });
}

describe('the PostgreSQL schema', () => {
  it('is created in an empty database as exactly schema.sql', async () => {
    const [migrated, written] = await Promise.all([freshDatabase('schema migrated'), freshDatabase('schema written')]);
    await withClient(migrated, (client) => migrate(client));
    await withClient(written, (client) => client.query(SCHEMA_SQL));
    const expected = await catalog(written);
    expect((expected as { columns: unknown[] }).columns.length).toBeGreaterThan(100);
    expect((expected as { functions: unknown[] }).functions).toHaveLength(1);
    expect(await catalog(migrated)).toEqual(expected);
  });

  it('is created once when three replicas start at the same time', async () => {
    const url = await freshDatabase('schema race');
    const clients = Array.from({ length: 3 }, () => new pg.Client({ connectionString: url }));
    await Promise.all(clients.map((client) => client.connect()));
    try {
      const applied = await Promise.all(clients.map((client) => migrate(client)));
      expect(applied.flat()).toEqual([SCHEMA_VERSION]);
      const { rows } = await clients[0].query('SELECT version FROM schema_migrations ORDER BY version');
      expect(rows).toEqual([{ version: SCHEMA_VERSION }]);
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
  });

  it('refuses a database of a version it does not know, changing nothing', async () => {
    const url = await freshDatabase('schema newer');
    await withClient(url, async (client) => {
      await migrate(client);
      await client.query("INSERT INTO schema_migrations (version, name, applied_ms) VALUES ($1, 'from the future', 0)", [SCHEMA_VERSION + 1]);
      await expect(migrate(client)).rejects.toThrow(SchemaVersionError);
      const { rows } = await client.query('SELECT count(*)::int AS n FROM schema_migrations');
      expect(rows[0].n).toBe(2);
    });
  });
});
