/**
 * The store's errors that reach the service's error handler or `govctl serve` (errors.ts maps
 * them to HTTP answers and exit codes), whichever backend raised them.
 */

/** The database was written by a newer govctl (a schema this code does not know). */
export class SchemaVersionError extends Error {
  override readonly name = 'SchemaVersionError';
}

/**
 * The database file was deleted or replaced while the service had it open: a write committed now
 * would go to a file nobody will open again, so writes are refused (503).
 */
export class DatabaseFileChangedError extends Error {
  override readonly name = 'DatabaseFileChangedError';
}

/** Another `govctl serve` holds the database; a second one would race it for every write. */
export class DatabaseInUseError extends Error {
  override readonly name = 'DatabaseInUseError';
}

/** The database (or its directory, where SQLite makes its WAL files) cannot be written. */
export class DatabaseReadOnlyError extends Error {
  override readonly name = 'DatabaseReadOnlyError';
}
