/**
 * Opening a store: the one place that picks the backend from the location (docs/architecture.md,
 * "The store"). A file path or `:memory:` is a SQLite database (sqlite/); a `postgres://` or
 * `postgresql://` URL is a PostgreSQL database. A new backend is one folder beside sqlite/ and one
 * branch here.
 */
import type { LedgerOptions } from '../ledger/notes.js';
import { isPostgresLocation } from './location.js';
import { acquireServeLock, assertWritable, type ServeLock } from './sqlite/database.js';
import { openSqliteStore } from './sqlite/store.js';
import type { Store } from './store.js';

export interface StoreOptions {
  /** the transparency log's key and origin (ledger/notes.ts); without a key no checkpoint is signed */
  ledger?: LedgerOptions;
}

export { isPostgresLocation } from './location.js';

/**
 * Opens (creating and migrating as needed) the store at `location`.
 * @param location a SQLite file path, `:memory:` for a throw-away SQLite database, or a `postgres://` URL
 * @throws SchemaVersionError when the database's schema is newer than this code
 */
export async function openStore(location: string, options: StoreOptions = {}): Promise<Store> {
  // Loaded only for a URL: the PostgreSQL driver is not what the embedded store and SQLite pay for.
  if (isPostgresLocation(location)) return (await import('./postgres/index.js')).openPostgresStore(location, options);
  return openSqliteStore(location, options);
}

/**
 * What `govctl serve` claims before it opens the store: for SQLite, that this process can write
 * the file and its directory, and the lock that lets one `govctl serve` at a time use the file;
 * for PostgreSQL nothing (replicas share the database by design).
 * @throws DatabaseReadOnlyError, DatabaseInUseError (SQLite)
 */
export function claimForServing(location: string): ServeLock {
  // Replicas share a PostgreSQL database by design: nothing to claim.
  if (isPostgresLocation(location)) return { release() {} };
  assertWritable(location);
  return acquireServeLock(location);
}
