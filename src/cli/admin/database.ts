/**
 * The service database as `govctl admin` and `govctl serve` use it: the server module loaded
 * lazily (SQLite and Fastify load only here, style.md rule 10), and the failures of opening or
 * changing a database mapped to the CLI's typed errors (docs/exit-codes.md):
 * a missing file or directory 66, a file that is not a govctl database 65, a database from a newer
 * govctl 78, an unknown workspace or key id 65 (`not_found`), an invalid value 64.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError, DataError, InputFileError, UsageError } from '../errors.js';
import { displayLocation, isPostgresLocation } from '../../server/store/location.js';
import { displayPath } from '../settings.js';

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
  // a PostgreSQL URL is the database's address: nothing to resolve or look for on disk
  if (isPostgresLocation(file)) return file;
  const path = resolve(cwd, file);
  if (mustExist) {
    if (!existsSync(path)) {
      throw new InputFileError(`no database ${displayPath(path)}`, { field: '--db', hint: 'check the path; `govctl admin init --db FILE` creates one' });
    }
  } else {
    const dir = dirname(path);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) {
      throw new InputFileError(`cannot create the database ${displayPath(path)}: no directory ${displayPath(dir)}`, { field: '--db', hint: 'create the directory first' });
    }
  }
  if (existsSync(path) && statSync(path).isDirectory()) {
    throw new InputFileError(`the database ${displayPath(path)} is a directory`, { field: '--db', hint: 'give the path of a database file' });
  }
  return path;
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

/** A database location as shown in messages: a file path with `~`, a URL without its password. */
export function displayDatabase(location: string): string {
  return isPostgresLocation(location) ? displayLocation(location) : displayPath(location);
}

/**
 * The transparency log's key file: `--log-key` when given, else beside a database file. A
 * PostgreSQL database has no "beside": every replica is given the same file.
 */
export function logKeyFile(location: string, given: string | undefined, cwd: string, server: ServerModule): string {
  if (given !== undefined) return resolve(cwd, given);
  if (isPostgresLocation(location)) {
    throw new ConfigError('a PostgreSQL database has no file beside it for the transparency log\'s key: give --log-key FILE', {
      field: '--log-key',
      hint: 'the same key file on every replica; `govctl admin init --db URL --log-key FILE` makes it (docs/service.md, "PostgreSQL")',
    });
  }
  return server.ledgerKeyPath(location);
}

/** Why a PostgreSQL database could not be used, when that is the failure (78: the configuration to fix). */
function postgresFailure(error: unknown, where: string, server: ServerModule): ConfigError | undefined {
  const hint = 'check the URL (host, port, database, user) and that PostgreSQL accepts this connection';
  if (error instanceof server.DatabaseUnavailableError) return new ConfigError(`cannot use the PostgreSQL database ${where}: ${error.message}`, { field: '--db', hint });
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  const network = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET'];
  // 28xxx: authentication; 3D000: no such database; 08xxx: connection failures
  if (!network.includes(code) && !/^(28|08)/.test(code) && code !== '3D000') return undefined;
  return new ConfigError(`cannot use the PostgreSQL database ${where}: ${(error as Error).message} (${code})`, { field: '--db', hint });
}

export function mapDatabaseError(error: unknown, path: string, server: ServerModule): unknown {
  const where = displayDatabase(path);
  const unreachable = isPostgresLocation(path) ? postgresFailure(error, where, server) : undefined;
  if (unreachable) return unreachable;
  if (error instanceof server.AdminError) {
    if (error.code === 'not_found') {
      const hint = error.field === 'public-key' ? 'see `govctl admin signing-key list --db FILE --workspace WS`' : 'see `govctl admin api-key list --db FILE` for the ids in this database';
      return new DataError(error.message, { code: 'not_found', ...(error.field ? { field: error.field } : {}), hint });
    }
    return new UsageError(error.message, { ...(error.field ? { field: `--${error.field === 'expiresAt' ? 'expires-in' : error.field}` } : {}) });
  }
  if (error instanceof server.SchemaVersionError) return new ConfigError(`${where}: ${error.message}`, { field: '--db' });
  const code = sqliteCode(error);
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return new DataError(`${where} is not a govctl database`, { code: 'invalid_database', field: '--db', hint: 'give the database file that `govctl admin init` or `govctl serve` made' });
  }
  if (code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY' || code === 'SQLITE_PERM' || code === 'SQLITE_AUTH') {
    return new InputFileError(`cannot open the database ${where} (${code})`, { field: '--db', hint: 'check the file and its directory are readable and writable' });
  }
  return error;
}
