/**
 * store/sqlite/schema.sql is the schema a new database gets: opening an empty database must yield
 * exactly what the file creates (the same tables, columns, constraints and indexes, and the same
 * rows it seeds), with nothing left out and nothing added on the way.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteOnly } from '../helpers/backend.js';
import { openDatabase, type Db } from '../../src/server/store/sqlite/database.js';

const SCHEMA_SQL = readFileSync(fileURLToPath(new URL('../../src/server/store/sqlite/schema.sql', import.meta.url)), 'utf8');

/** SQL text without comments, with runs of white space made one and none beside ( ) , */
function normalised(sql: string | null): string | null {
  if (sql === null) return null;
  return sql
    .replace(/--[^\n]*/g, '')
    .replace(/\s+/g, ' ')
    .replace(/\s*([(),])\s*/g, '$1')
    .trim();
}

/** Every schema object as SQLite keeps it (auto-indexes included, by name). */
function schemaOf(db: Db): { type: string; name: string; tbl_name: string; sql: string | null }[] {
  return (
    db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name').all() as {
      type: string;
      name: string;
      tbl_name: string;
      sql: string | null;
    }[]
  ).map((row) => ({ ...row, sql: normalised(row.sql) }));
}

/** The rows the schema itself seeds. */
function seededRows(db: Db): unknown {
  return {
    index_progress: db.prepare('SELECT * FROM index_progress ORDER BY name').all(),
  };
}

const open: Db[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});

// SQLite-only: SQLite's schema.sql. PostgreSQL's: test/server/postgres/schema.test.ts.
describe.skipIf(sqliteOnly)('schema.sql', () => {
  it('is exactly what opening an empty database creates: objects, columns, constraints, indexes and seeded rows', () => {
    const migrated = openDatabase(':memory:');
    const fromFile = new Database(':memory:');
    open.push(migrated, fromFile);
    fromFile.exec(SCHEMA_SQL);
    expect(schemaOf(fromFile)).toEqual(schemaOf(migrated));
    expect(seededRows(fromFile)).toEqual(seededRows(migrated));
    expect(schemaOf(migrated).filter((row) => row.type === 'table')).toHaveLength(24); // a schema that stopped part way would leave fewer
  });

  it('tells a column of another type from the migrated one (the comparison is not blind)', () => {
    const migrated = openDatabase(':memory:');
    const altered = new Database(':memory:');
    open.push(migrated, altered);
    altered.exec(SCHEMA_SQL.replace('risk_tier        TEXT,', 'risk_tier        INTEGER,'));
    expect(schemaOf(altered)).not.toEqual(schemaOf(migrated));
  });
});
