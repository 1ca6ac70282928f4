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

/**
 * The database cannot be reached or is shutting down (a PostgreSQL server restarting, a network
 * cut): nothing was stored by the request that met it, and a retry may succeed (503).
 */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
}

/**
 * A value the database cannot hold as sent (PostgreSQL's text cannot hold U+0000), so it was not
 * stored (422): stored differently, it would no longer be the record that was signed.
 */
export class UnstorableValueError extends Error {
  override readonly name = 'UnstorableValueError';
}

/** The target PostgreSQL database holds data already. */
export class MigrationTargetNotEmptyError extends Error {
  override readonly name = 'MigrationTargetNotEmptyError';
}

/** A failure of one side of a migration: `cause` is the backend's error, `side` which database it concerns. */
export class MigrationSideError extends Error {
  override readonly name = 'MigrationSideError';
  constructor(
    readonly side: 'source' | 'target',
    override readonly cause: unknown,
  ) {
    super(`${side === 'source' ? 'the SQLite database' : 'the PostgreSQL database'}: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/**
 * A replica's log key is not the one the replica holding the integration lease signs with
 * (PostgreSQL: every replica must be given the same key file).
 */
export class LogKeyMismatchError extends Error {
  override readonly name = 'LogKeyMismatchError';
}
