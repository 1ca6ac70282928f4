/**
 * Opening a store: the one place that picks the backend from the location (docs/architecture.md,
 * "The store"). A file path or `:memory:` is a SQLite database (sqlite/); a `postgres://` or
 * `postgresql://` URL is a PostgreSQL database. A new backend is one folder beside sqlite/ and one
 * branch here.
 */
import type { LedgerOptions } from './ledger-common.js';
import { acquireServeLock, assertWritable, type ServeLock } from './sqlite/database.js';
import { openSqliteStore } from './sqlite/store.js';
import type { Store } from './store.js';

export interface StoreOptions {
  /** the transparency log's key and origin (ledger-common.ts); without a key no checkpoint is signed */
  ledger?: LedgerOptions;
}

/** The location names a backend this build does not have. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

/** Whether a location is a PostgreSQL URL rather than a SQLite file. */
export function isPostgresLocation(location: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(location);
}

/**
 * Opens (creating and migrating as needed) the store at `location`.
 * @param location a SQLite file path, `:memory:` for a throw-away SQLite database, or a `postgres://` URL
 * @throws StoreUnavailableError for a PostgreSQL URL (not available yet)
 * @throws SchemaVersionError when the database's schema is newer than this code
 */
export async function openStore(location: string, options: StoreOptions = {}): Promise<Store> {
  if (isPostgresLocation(location)) {
    throw new StoreUnavailableError('PostgreSQL is not available yet in this govctl: give a SQLite database file instead');
  }
  return openSqliteStore(location, options);
}

/**
 * What `govctl serve` claims before it opens the store: for SQLite, that this process can write
 * the file and its directory, and the lock that lets one `govctl serve` at a time use the file.
 * @throws DatabaseReadOnlyError, DatabaseInUseError (SQLite); StoreUnavailableError (PostgreSQL)
 */
export function claimForServing(location: string): ServeLock {
  if (isPostgresLocation(location)) {
    throw new StoreUnavailableError('PostgreSQL is not available yet in this govctl: give a SQLite database file instead');
  }
  assertWritable(location);
  return acquireServeLock(location);
}
