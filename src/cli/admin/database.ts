/**
 * The service database as `govctl admin` and `govctl serve` use it: where it is (`--db`, else
 * DATABASE_URL: a SQLite file or a PostgreSQL URL, never one taken for the other), the server
 * module loaded lazily (SQLite, PostgreSQL and Fastify load only here, so other commands start without them), and the
 * failures of opening or changing a database mapped to the CLI's typed errors (docs/exit-codes.md):
 * a missing file or directory, or a PostgreSQL database that does not exist 66, a file that is not
 * a govctl database 65, a database from a newer govctl 78, PostgreSQL refusing the credentials 78,
 * PostgreSQL not reachable 69, an unknown workspace or key id 65 (`not_found`), an invalid value 64.
 * A PostgreSQL URL is only ever shown without its password (store/location.ts).
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Option } from 'commander';
import { ConfigError, DataError, InputFileError, DatabaseUnreachableError, UsageError } from '../errors.js';
import type { Factory } from '../factory.js';
import { displayLocation, isPostgresLocation, isUrlLike, scrubLocation } from '../../server/store/location.js';
import { displayPath } from '../settings.js';

/** The environment variable naming the database when `--db` is not given (a PostgreSQL URL only). */
export const DATABASE_URL_ENV = 'DATABASE_URL';
/** The environment variable naming the transparency log's key file when `--log-key` is not given. */
export const LOG_KEY_FILE_ENV = 'GOVCTL_LOG_KEY_FILE';

/** The `--db` option of the admin commands (DATABASE_URL stands in for it). */
export function dbOption(): Option {
  return new Option('--db <file|url>', `the service database: a SQLite file or a postgres:// URL (default: $${DATABASE_URL_ENV})`);
}

/** What a command asks for when it is given no database: the flag to give, and what to give it. */
export interface DatabaseFlag {
  flag: string;
  hint: string;
}

export const DB_FLAG: DatabaseFlag = { flag: '--db FILE|URL', hint: 'give the SQLite file or postgres:// URL `govctl serve` uses' };

/**
 * The database a command works on: `--db` when given, else DATABASE_URL, which must be a
 * PostgreSQL URL (hosting platforms set it to one; a file is given with --db). `serve` passes
 * `fallback` (its data-dir file) for when neither is set; the admin commands require one.
 * @returns a resolved file path or a PostgreSQL URL (see {@link databasePath})
 */
export function databaseLocation(
  given: string | undefined,
  deps: Pick<Factory, 'env' | 'cwd'>,
  mustExist: boolean,
  command: string,
  { flag, hint }: DatabaseFlag = DB_FLAG,
): string {
  if (given !== undefined) return databasePath(given, deps.cwd, mustExist);
  const fromEnv = deps.env[DATABASE_URL_ENV];
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!isPostgresLocation(fromEnv)) {
      throw new ConfigError(
        `${DATABASE_URL_ENV} is set but is not a postgres:// URL (it holds ${isUrlLike(fromEnv) ? displayLocation(fromEnv) : 'something else'})`,
        {
          field: DATABASE_URL_ENV,
          hint: 'set it to postgres://USER@HOST:PORT/DATABASE, or give a SQLite file with --db FILE',
        },
      );
    }
    return databasePath(fromEnv, deps.cwd, mustExist);
  }
  throw new UsageError(`${command} needs ${flag} (or ${DATABASE_URL_ENV})`, { field: flag.split(' ')[0], hint });
}

/** The server module (`govctl/server`), loaded on first use. */
export type ServerModule = typeof import('../../server/index.js');

export async function loadServer(): Promise<ServerModule> {
  return import('../../server/index.js');
}

/**
 * The database path, resolved. With `mustExist` (every admin command but `init`) a missing file is
 * 66 rather than a new empty database made by a typo; otherwise its directory must exist.
 */
export function databasePath(file: string, cwd: string, mustExist: boolean): string {
  // A PostgreSQL URL is the database's address: nothing to resolve or look for on disk. A URL of
  // another scheme is refused rather than made into a file named after it.
  if (isPostgresLocation(file)) return file;
  if (isUrlLike(file)) {
    throw new UsageError(`${displayLocation(file)} is not a database govctl can use`, {
      field: '--db',
      hint: 'give a SQLite file path or a postgres:// (postgresql://) URL',
    });
  }
  const path = resolve(cwd, file);
  if (mustExist) {
    if (!existsSync(path)) {
      throw new InputFileError(`no database ${displayPath(path)}`, { field: '--db', hint: 'check the path; `govctl admin init --db FILE` creates one' });
    }
  } else {
    const dir = dirname(path);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) {
      throw new InputFileError(`cannot create the database ${displayPath(path)}: no directory ${displayPath(dir)}`, {
        field: '--db',
        hint: 'create the directory first',
      });
    }
  }
  if (existsSync(path) && statSync(path).isDirectory()) {
    throw new InputFileError(`the database ${displayPath(path)} is a directory`, { field: '--db', hint: 'give the path of a database file' });
  }
  return path;
}

/** A database location as shown in messages: a file path with `~`, a URL without its password. */
export function displayDatabase(location: string): string {
  return isPostgresLocation(location) ? displayLocation(location) : displayPath(location);
}

/**
 * The transparency log's key file: `--log-key`, else GOVCTL_LOG_KEY_FILE, else beside a database
 * file (`<db>.ledger-key`). A PostgreSQL database has no "beside", and its replicas must all sign
 * with the same key: the file is required (78 with how to make one).
 */
export function logKeyFile(location: string, given: string | undefined, deps: Pick<Factory, 'env' | 'cwd'>, server: ServerModule): string {
  const named = given ?? (deps.env[LOG_KEY_FILE_ENV] || undefined);
  if (named !== undefined) return resolve(deps.cwd, named);
  if (isPostgresLocation(location)) {
    throw new ConfigError(`a PostgreSQL database needs the transparency log's key file: give --log-key FILE (or ${LOG_KEY_FILE_ENV})`, {
      field: '--log-key',
      hint: `make one with \`govctl admin ledger-key create --db URL --log-key FILE\` (or \`govctl admin init --db URL --log-key FILE\`), and give every replica the same file`,
    });
  }
  return server.ledgerKeyPath(location);
}

/** 65: the file at `path` is not a govctl database. */
function notADatabase(path: string): DataError {
  return new DataError(`${displayDatabase(path)} is not a govctl database`, {
    code: 'invalid_database',
    field: '--db',
    hint: 'give the database file that `govctl admin init` or `govctl serve` made',
  });
}

/** The first 16 bytes of every SQLite database file (sqlite.org/fileformat.html, 1.3). */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * Refuses (65) a SQLite location whose file exists but is not a SQLite database (a text file given
 * by mistake), before anything else is looked for or made beside it: `serve` would otherwise ask
 * for a log key file, and `ledger-key create` write one, for a file that is no database. A
 * missing or empty file is left to the store (it makes a new database).
 * @throws DataError (65)
 */
export function assertDatabaseFile(path: string): void {
  if (isPostgresLocation(path) || !existsSync(path)) return;
  let fd: number | undefined;
  const head = Buffer.alloc(SQLITE_HEADER.length);
  let read = 0;
  try {
    fd = openSync(path, 'r');
    read = readSync(fd, head, 0, head.length, 0);
  } catch {
    return; // unreadable: the store says why
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (read > 0 && (read < SQLITE_HEADER.length || !head.equals(SQLITE_HEADER))) throw notADatabase(path);
}

/** The `code` of a better-sqlite3 error (`SQLITE_NOTADB`, …), if it is one. */
function sqliteCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/**
 * Runs database work and maps what can go wrong to the CLI's errors; anything else stays as it is
 * (an internal error, 70).
 */
export async function withDatabaseErrors<T>(path: string, work: (server: ServerModule) => T | Promise<T>): Promise<T> {
  const server = await loadServer();
  try {
    return await work(server);
  } catch (error) {
    throw mapDatabaseError(error, path, server);
  }
}

/** Node's codes for a host that cannot be reached (the connection never got to PostgreSQL). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);

/** Node's codes for a server certificate TLS did not accept. */
const TLS_CERTIFICATE =
  /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|UNABLE_TO_VERIFY_LEAF_SIGNATURE|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|CERT_UNTRUSTED|CERT_REJECTED|CERT_SIGNATURE_FAILURE|ERR_TLS_CERT_ALTNAME_INVALID)$/;

/**
 * What went wrong connecting to PostgreSQL, as the CLI's error: not reachable 69 (start it, or
 * retry), credentials refused 78 (SQLSTATE class 28, or a password the server asked for and the
 * URL lacks), no such database 66 (SQLSTATE 3D000). The message names the database without its
 * password; PostgreSQL's own text never quotes it.
 */
function postgresFailure(thrown: unknown, where: string, server: ServerModule): Error | undefined {
  // the store wraps a connection that failed as DatabaseUnavailableError (503 in the service); its cause says why
  const unavailable = thrown instanceof server.DatabaseUnavailableError;
  const error = unavailable && thrown.cause !== undefined ? thrown.cause : thrown;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code === 'string' && UNREACHABLE.has(code)) {
    return new DatabaseUnreachableError(`cannot reach the PostgreSQL database ${where} (${code})`, {
      field: '--db',
      hint: 'check that PostgreSQL runs and listens on that host and port',
    });
  }
  if ((typeof code === 'string' && code.startsWith('28')) || /client password must be a string|password authentication failed/i.test(message)) {
    return new ConfigError(`PostgreSQL refused the credentials for ${where}: ${message}`, {
      field: '--db',
      hint: 'check the user and password (in the URL, PGPASSWORD or ~/.pgpass) and pg_hba.conf',
    });
  }
  // TLS the URL asks for (sslmode) and the server does not give, or a certificate not accepted:
  // the URL and the server disagree, which is configuration, not a bug (it was 70) nor an outage
  if (/server does not support SSL connections/i.test(message)) {
    return new ConfigError(`PostgreSQL at ${where} does not accept TLS connections, which the URL's sslmode asks for`, {
      field: '--db',
      hint: 'turn on ssl on the server, or, on a network you trust, set sslmode=disable in the URL',
    });
  }
  if (typeof code === 'string' && TLS_CERTIFICATE.test(code)) {
    return new ConfigError(`the TLS certificate of the PostgreSQL server at ${where} was not accepted (${code}): ${message}`, {
      field: '--db',
      hint: 'give the CA that signed it with sslrootcert=FILE in the URL, and check that the URL names the host the certificate is for',
    });
  }
  if (code === '3D000') {
    return new InputFileError(`the PostgreSQL database ${where} does not exist`, {
      field: '--db',
      hint: 'create it first (`createdb NAME`, or CREATE DATABASE NAME OWNER USER)',
    });
  }
  if ((typeof code === 'string' && code.startsWith('08')) || unavailable) {
    return new DatabaseUnreachableError(`cannot connect to the PostgreSQL database ${where}: ${message}${typeof code === 'string' ? ` (${code})` : ''}`, {
      field: '--db',
      hint: 'check that PostgreSQL runs and accepts connections',
    });
  }
  return undefined;
}

/**
 * The CLI's error for a failure on the database at `path`. Whatever is not recognised keeps its
 * type (an internal error, 70), its message scrubbed of the URL's password.
 */
export function mapDatabaseError(error: unknown, path: string, server: ServerModule): unknown {
  const mapped = mapKnownDatabaseError(error, path, server);
  if (mapped === error && error instanceof Error && isPostgresLocation(path)) {
    error.message = scrubLocation(error.message, path);
    if (error.stack !== undefined) error.stack = scrubLocation(error.stack, path);
  }
  return mapped;
}

function mapKnownDatabaseError(error: unknown, path: string, server: ServerModule): unknown {
  const where = displayDatabase(path);
  if (isPostgresLocation(path)) {
    const failure = postgresFailure(error, where, server);
    // PostgreSQL's own text never quotes the password; scrubbed anyway, as every message that may
    if (failure !== undefined) {
      failure.message = scrubLocation(failure.message, path);
      return failure;
    }
  }
  if (error instanceof server.AdminError) {
    if (error.code === 'not_found') {
      const hint =
        error.field === 'public-key'
          ? 'see `govctl admin signing-key list --db FILE --workspace WS`'
          : 'see `govctl admin api-key list --db FILE` for the ids in this database';
      return new DataError(error.message, { code: 'not_found', ...(error.field ? { field: error.field } : {}), hint });
    }
    return new UsageError(error.message, { ...(error.field ? { field: `--${error.field === 'expiresAt' ? 'expires-in' : error.field}` } : {}) });
  }
  if (error instanceof server.SchemaVersionError) return new ConfigError(`${where}: ${error.message}`, { field: '--db' });
  if (error instanceof server.LogKeyMismatchError) {
    return new ConfigError(`${where}: ${error.message}`, {
      field: '--log-key',
      hint: 'give every replica the same --log-key file; to rotate the key, stop every replica first ("Rotating the log key" in docs/ledger.md)',
    });
  }
  const code = sqliteCode(error);
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') return notADatabase(path);
  if (code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY' || code === 'SQLITE_PERM' || code === 'SQLITE_AUTH') {
    return new InputFileError(`cannot open the database ${where} (${code})`, {
      field: '--db',
      hint: 'check the file and its directory are readable and writable',
    });
  }
  return error;
}
