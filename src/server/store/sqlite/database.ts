/**
 * Opening the service database: pragmas for durability, then the schema (schema.sql) on a new one.
 *
 * Durability (docs/service.md): WAL with `synchronous=FULL`, so a transaction that has
 * committed survives a crash or power loss, and readers never block the writer.
 */
import { accessSync, chmodSync, constants, existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { DatabaseFileChangedError, DatabaseInUseError, DatabaseReadOnlyError, SchemaVersionError } from '../errors.js';
import SCHEMA_SQL from './schema.sql';

export type Db = Database.Database;

/** The schema version schema.sql creates, kept as SQLite's `user_version`. */
export const SCHEMA_VERSION = 1;

let addon: string | undefined;

/**
 * better-sqlite3's compiled addon, `build/Release` (or `build/Debug`) in its package: given to every
 * connection as `nativeBinding`, so that better-sqlite3 does not search for it with the `bindings`
 * package (a dozen failed requires and a stack trace, about 1.3 ms of every command that opens the
 * embedded store), and so that the command line can bundle better-sqlite3's JavaScript, which then
 * cannot find the addon relative to itself (scripts/build.mjs).
 */
function nativeAddon(): string {
  if (addon !== undefined) return addon;
  const root = dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'));
  const candidates = ['Release', 'Debug'].map((build) => join(root, 'build', build, 'better_sqlite3.node'));
  const found = candidates.find((file) => existsSync(file));
  if (found === undefined) throw new Error(`better-sqlite3's addon is not built (looked for ${candidates.join(' and ')}); run \`npm rebuild better-sqlite3\``);
  return (addon = found);
}

/** A connection to a SQLite file (or `:memory:`) through {@link nativeAddon}. */
function connect(path: string): Db {
  return new Database(path, { nativeBinding: nativeAddon() });
}

/** The file each open database was opened as: its device and inode. */
const openedAs = new WeakMap<Db, { path: string; dev: number; ino: number }>();

/**
 * Throws DatabaseFileChangedError when the file at the database's path is no longer the one that
 * was opened (deleted, or replaced by another file). One stat(2): cheap enough for every group
 * commit. A `:memory:` database always passes.
 */
export function checkDatabaseFile(db: Db): void {
  const opened = openedAs.get(db);
  if (opened === undefined) return;
  let current: { dev: number; ino: number } | undefined;
  try {
    current = statSync(opened.path);
  } catch {
    current = undefined;
  }
  if (current === undefined || current.dev !== opened.dev || current.ino !== opened.ino) {
    throw new DatabaseFileChangedError(
      `the database file ${opened.path} was ${current === undefined ? 'deleted' : 'replaced'} while the service was running; writes are refused until the service is restarted`,
    );
  }
}

/**
 * Refuses a database the service could not write: the file (when it exists) and its directory
 * (SQLite creates the -wal and -shm files there) must be writable by this process.
 * @throws DatabaseReadOnlyError
 */
export function assertWritable(path: string): void {
  if (path === ':memory:') return;
  for (const [what, target] of [
    ['database file', path],
    ['directory', dirname(path)],
  ] as const) {
    if (what === 'database file' && !existsSync(target)) continue;
    try {
      accessSync(target, constants.W_OK);
    } catch {
      throw new DatabaseReadOnlyError(`the ${what} ${target} is not writable by this process`);
    }
  }
}

/** A held single-instance lock; release() lets another `govctl serve` start. */
export interface ServeLock {
  release(): void;
}

/** The lock file beside a database. */
export function serveLockPath(path: string): string {
  return `${path}.serve-lock`;
}

/**
 * Takes the lock that lets one `govctl serve` at a time use a database: an exclusive lock on a
 * small SQLite file beside it (`<db>.serve-lock`), taken with SQLite's own file locks. The kernel
 * drops the lock when the process ends, however it ends, so a killed service never blocks a restart.
 * `govctl admin` does not take it: it may work on the database beside a running service.
 * @throws DatabaseInUseError when another process holds it
 */
export function acquireServeLock(path: string): ServeLock {
  if (path === ':memory:') return { release() {} };
  const lockPath = serveLockPath(path);
  const isNew = !existsSync(lockPath);
  const lock = connect(lockPath);
  try {
    if (isNew) chmodSync(lockPath, 0o600);
    lock.pragma('busy_timeout = 0');
    lock.pragma('journal_mode = DELETE');
    // In exclusive locking mode the first write's lock is held until the connection closes.
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('CREATE TABLE IF NOT EXISTS holder (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, since TEXT NOT NULL)');
    lock.prepare('INSERT OR REPLACE INTO holder (id, pid, since) VALUES (1, ?, ?)').run(process.pid, new Date().toISOString());
  } catch (error) {
    lock.close();
    const code = (error as { code?: unknown }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      throw new DatabaseInUseError(`another govctl serve is already running on ${path} (it holds ${lockPath}); stop it first, or give this one another --db`);
    }
    throw error;
  }
  return {
    release() {
      if (lock.open) lock.close();
    },
  };
}

/**
 * Opens (creating it if needed) a service database, creating its schema when it is empty.
 * @param path a file path, or `:memory:` for a throw-away database (tests, dry tools)
 * @throws SchemaVersionError when the file's schema is of a version this code does not know
 */
export function openDatabase(path: string): Db {
  const isNew = path !== ':memory:' && !existsSync(path);
  const db = connect(path);
  try {
    // busy_timeout first: the switch to WAL and creating the schema may wait for another process
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
    if (path !== ':memory:') {
      const { dev, ino } = statSync(path);
      openedAs.set(db, { path, dev, ino });
    }
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Creates the schema in an empty database (`user_version` 0), in one immediate transaction; a
 * database of the current version is left as it is, and any other version is refused.
 */
export function migrate(db: Db): void {
  const version = () => db.pragma('user_version', { simple: true }) as number;
  if (version() === SCHEMA_VERSION) return;
  db.transaction(() => {
    // Read again under the write lock: another process may have created the schema meanwhile.
    const current = version();
    if (current === SCHEMA_VERSION) return;
    if (current !== 0) {
      throw new SchemaVersionError(
        `the database has schema version ${current}, which this govctl does not know (it writes version ${SCHEMA_VERSION}); use the govctl that created it`,
      );
    }
    db.exec(SCHEMA_SQL);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
