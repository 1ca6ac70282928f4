import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sqliteOnly } from '../helpers/backend.js';
import { SchemaVersionError } from '../../src/server/index.js';
import { openDatabase, SCHEMA_VERSION } from '../../src/server/store/sqlite/database.js';
import { GroupCommitWriter } from '../../src/server/store/sqlite/writer.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'govctl-store-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

// SQLite-only: SQLite's connection (WAL, synchronous, migrations) and GroupCommitWriter.
// PostgreSQL's: test/server/postgres/schema.test.ts and group-commit.test.ts.
describe.skipIf(sqliteOnly)('openDatabase', () => {
  it('opens in WAL mode with synchronous=FULL and creates the schema once', () => {
    const path = join(dir, 'a.db');
    const db = openDatabase(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
    const again = openDatabase(path); // no error: the schema is there
    expect(again.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    again.close();
  });

  it('refuses a database of a schema version it does not know', () => {
    const path = join(dir, 'b.db');
    const raw = new Database(path);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => openDatabase(path)).toThrow(SchemaVersionError);
  });
});

describe.skipIf(sqliteOnly)('GroupCommitWriter', () => {
  it('commits the writes queued in one turn of the event loop in one transaction', async () => {
    const db = openDatabase(':memory:');
    db.exec('CREATE TABLE t (n INTEGER)');
    const writer = new GroupCommitWriter(db);
    let commits = 0;
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        writer.write(() => {
          if (i === 0) commits++;
          insert.run(i);
          return i;
        }),
      ),
    );
    expect(results).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 100 });
    expect(commits).toBe(1);
    await writer.close();
    db.close();
  });

  it('rolls back and rejects only the write that throws; the rest of its group commits', async () => {
    const db = openDatabase(':memory:');
    db.exec('CREATE TABLE t (n INTEGER)');
    const writer = new GroupCommitWriter(db);
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const outcomes = await Promise.allSettled([
      writer.write(() => insert.run(1)),
      writer.write(() => {
        insert.run(2);
        throw new Error('half done');
      }),
      writer.write(() => insert.run(3)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(db.prepare('SELECT n FROM t ORDER BY n').all()).toEqual([{ n: 1 }, { n: 3 }]);
    await writer.close();
    await expect(writer.write(() => 1)).rejects.toThrow(/closed/);
    db.close();
  });

  it('resolves a write only after its transaction has committed', async () => {
    const path = join(dir, 'c.db');
    const db = openDatabase(path);
    db.exec('CREATE TABLE t (n INTEGER)');
    const writer = new GroupCommitWriter(db);
    await writer.write(() => db.prepare('INSERT INTO t (n) VALUES (1)').run());
    const reader = new Database(path, { readonly: true });
    expect(reader.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 1 });
    reader.close();
    await writer.close();
    db.close();
  });
});
