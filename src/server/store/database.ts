/**
 * Opening the service database: pragmas for durability, then the migrations of migrations.ts.
 *
 * Durability (docs/service.md): WAL with `synchronous=FULL`, so a transaction that has
 * committed survives a crash or power loss, and readers never block the writer.
 */
import { chmodSync, existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations.js';

export type Db = Database.Database;

/** The database was written by a newer govctl (a schema this code does not know). */
export class SchemaVersionError extends Error {
  override readonly name = 'SchemaVersionError';
}

/**
 * Opens (creating it if needed) and migrates a service database.
 * @param path a file path, or `:memory:` for a throw-away database (tests, dry tools)
 * @throws SchemaVersionError when the file's schema is newer than this code
 */
export function openDatabase(path: string): Db {
  const isNew = path !== ':memory:' && !existsSync(path);
  const db = new Database(path);
  try {
    // busy_timeout first: the switch to WAL and the migrations may wait for another process
    // (`govctl admin` beside a running `govctl serve`).
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    // Checkpoint every 4000 WAL pages (16 MiB) rather than SQLite's 1000: the pages every group
    // commit touches (index edges, systems, coverage) are copied into the database once per
    // checkpoint, so fewer checkpoints copy fewer pages, and each runs inside some request's COMMIT.
    db.pragma('wal_autocheckpoint = 4000');
    db.pragma('foreign_keys = ON');
    // Evidence is sensitive; the WAL and shared-memory files take the database file's mode.
    if (isNew) chmodSync(path, 0o600);
    migrate(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** Applies every migration newer than the database's `user_version`, in one immediate transaction. */
export function migrate(db: Db): void {
  const version = () => db.pragma('user_version', { simple: true }) as number;
  if (version() === SCHEMA_VERSION) return;
  db.transaction(() => {
    // Read again under the write lock: another process may have migrated meanwhile.
    const current = version();
    if (current > SCHEMA_VERSION) {
      throw new SchemaVersionError(`the database has schema version ${current}, newer than this govctl understands (${SCHEMA_VERSION}); upgrade govctl`);
    }
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    }
  }).immediate();
}
