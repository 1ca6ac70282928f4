/**
 * `govctl serve`: runs the reference service (src/server, loaded only here) on a host and port
 * over a database file. The listening URL goes to stderr as soon as it is known (so `--port 0` is
 * usable by scripts), then one JSON log line per request. SIGINT or SIGTERM shuts it down
 * gracefully: no new connections, requests in flight finish, queued writes commit, the database
 * closes, and the exit code is 0 (docs/exit-codes.md); a second signal drops open connections.
 */
import { mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { Command, Option } from 'commander';
import { addExamples, markWindsDown, wholeNumber } from '../command-kit.js';
import { ConfigError, InputFileError, UsageError } from '../errors.js';
import { DEFAULT_LOG_ORIGIN_PREFIX, ledgerOrigin } from '../../core/ledger/entry.js';
import type { Factory } from '../factory.js';
import { displayPath } from '../settings.js';
import {
  assertDatabaseFile,
  DATABASE_URL_ENV,
  databaseLocation,
  displayDatabase,
  logKeyFile,
  mapDatabaseError,
  loadServer,
  LOG_KEY_FILE_ENV,
  type ServerModule,
} from '../admin/database.js';
import { isPostgresLocation } from '../../server/store/location.js';
import { DEFAULT_LIMITS, type ServiceLimits } from '../../server/limits.js';

export interface ServeOptions {
  /** default 127.0.0.1 */
  host: string;
  /** default 8080; 0 picks a free port */
  port: number;
  /** the database: a file or a postgres:// URL (default DATABASE_URL, else `<dataDir>/server.db`) */
  db?: string;
  /** worker threads for batch signatures (default: one fewer than the cores) */
  verifyWorkers?: number;
  /** the transparency log's key file (default GOVCTL_LOG_KEY_FILE, else `<db>.ledger-key`; required for PostgreSQL) */
  logKey?: string;
  /** the log origin prefix (default govctl.local/ledger) */
  logOrigin?: string;
  /** the verdict key file (default GOVCTL_VERDICT_KEY_FILE, else `<db>.verdict-key` for a database file; none for PostgreSQL) */
  verdictKey?: string;
  /** budgets, caps and timeouts given on the command line (the rest keep their defaults) */
  limits?: Partial<ServiceLimits>;
}

/**
 * The limit flags: one per member of ServiceLimits an operator may change (docs/security.md).
 * Timeouts are given in seconds on the command line and kept in milliseconds.
 */
const LIMIT_FLAGS: readonly { flag: string; key: keyof ServiceLimits; what: string; seconds?: true; min: number; max: number }[] = [
  { flag: 'requests-per-minute', key: 'requestsPerMinute', what: 'requests a minute per workspace', min: 1, max: 1_000_000_000 },
  { flag: 'records-per-minute', key: 'recordsPerMinute', what: 'records a minute per workspace (every item of a batch)', min: 1000, max: 1_000_000_000 },
  { flag: 'max-connections', key: 'maxConnections', what: 'open connections at once', min: 1, max: 1_000_000 },
  { flag: 'headers-timeout', key: 'headersTimeoutMs', what: 'seconds a client may take to send the request headers', seconds: true, min: 1, max: 3600 },
  { flag: 'request-timeout', key: 'requestTimeoutMs', what: 'seconds a client may take to send a whole request', seconds: true, min: 1, max: 3600 },
  { flag: 'keep-alive-timeout', key: 'keepAliveTimeoutMs', what: 'seconds an idle keep-alive connection stays open', seconds: true, min: 1, max: 3600 },
  { flag: 'idle-timeout', key: 'idleTimeoutMs', what: 'seconds a connection with no traffic at all stays open', seconds: true, min: 1, max: 86_400 },
  {
    flag: 'max-requests-per-connection',
    key: 'maxRequestsPerSocket',
    what: 'requests on one connection before it is closed; 0: no limit',
    min: 0,
    max: 1_000_000_000,
  },
];

function defaultText(entry: (typeof LIMIT_FLAGS)[number]): string {
  const value = DEFAULT_LIMITS[entry.key];
  return String(entry.seconds ? value / 1000 : value);
}

/** The database file `serve` uses without `--db`. */
export const SERVER_DB_FILE = 'server.db';

export function createServeCommand(factory: Factory): Command {
  const command = new Command('serve')
    .description('run the reference service')
    .addOption(new Option('--host <host>', 'the address to listen on').default('127.0.0.1'))
    .addOption(new Option('--port <port>', 'the port; 0 picks a free one').argParser(wholeNumber('--port', { min: 0, max: 65535 })).default(8080))
    .option(
      '--db <file|url>',
      `the service database: a SQLite file or a postgres:// URL (default: $${DATABASE_URL_ENV}, else <data dir>/${SERVER_DB_FILE}; created if missing)`,
    )
    .addOption(
      new Option('--verify-workers <n>', 'threads that check the signatures of attestation batches (default: one fewer than the cores; 0: none)').argParser(
        wholeNumber('--verify-workers', { min: 0, max: 64 }),
      ),
    )
    .option(
      '--log-key <file>',
      `the transparency log's key file (default: $${LOG_KEY_FILE_ENV}, else <db>.ledger-key, made by \`govctl admin init\`; required with PostgreSQL, the same file on every replica)`,
    )
    .option('--log-origin <prefix>', "the log origin prefix: a workspace's log is <prefix>/<workspace_id>", 'govctl.local/ledger')
    .option(
      '--verdict-key <file>',
      `the key file that signs gate verdicts (default: $${VERDICT_KEY_FILE_ENV}, else <db>.verdict-key, made if missing; with PostgreSQL none unless given, the same file on every replica)`,
    )
    .action(
      async (
        flags: { host: string; port: number; db?: string; verifyWorkers?: number; logKey?: string; logOrigin?: string; verdictKey?: string } & Record<
          string,
          unknown
        >,
      ) => {
        const limits: Partial<ServiceLimits> = {};
        for (const entry of LIMIT_FLAGS) {
          const value = flags[camel(entry.flag)];
          if (typeof value === 'number') limits[entry.key] = entry.seconds ? value * 1000 : value;
        }
        return run(
          {
            host: flags.host,
            port: flags.port,
            ...(flags.db !== undefined ? { db: flags.db } : {}),
            ...(flags.logKey !== undefined ? { logKey: flags.logKey } : {}),
            ...(flags.logOrigin !== undefined ? { logOrigin: flags.logOrigin } : {}),
            ...(flags.verdictKey !== undefined ? { verdictKey: flags.verdictKey } : {}),
            ...(flags.verifyWorkers !== undefined ? { verifyWorkers: flags.verifyWorkers } : {}),
            limits,
          },
          factory,
        );
      },
    );
  for (const entry of LIMIT_FLAGS) {
    command.addOption(
      new Option(`--${entry.flag} <n>`, `${entry.what} (default ${defaultText(entry)})`).argParser(
        wholeNumber(`--${entry.flag}`, { min: entry.min, max: entry.max }),
      ),
    );
  }
  markWindsDown(command);
  command.addHelpText(
    'after',
    '\nThe listening URL is printed on stderr ("govctl: listening on http://HOST:PORT"), then one JSON line per\n' +
      'request. Provision the database with `govctl admin init --db FILE` to get an API key.\n' +
      'SIGINT (Ctrl-C) or SIGTERM stops it gracefully, finishing requests in flight, and exits 0; a second\n' +
      "signal drops open connections. Exit codes: 66 the database's directory is missing or the database cannot\n" +
      'be written, 65 the file is not a govctl database, 78 the host or port cannot be used (in use, not permitted),\n' +
      'the database is newer, or another govctl serve is running on it. Limits: docs/security.md.\n' +
      'PostgreSQL: --db postgres://USER@HOST:PORT/DB (or DATABASE_URL; --db wins) runs this process as one of\n' +
      'several replicas on one database; give each the same --log-key FILE. The password is never printed (put it\n' +
      'in PGPASSWORD or ~/.pgpass rather than on the command line). 69: PostgreSQL cannot be reached; 78: it\n' +
      'refused the credentials; 66: the database does not exist (docs/service.md, "PostgreSQL").\n',
  );
  return addExamples(command, [
    'govctl serve',
    'govctl serve --host 0.0.0.0 --port 8443 --db /var/lib/govctl/server.db',
    'govctl serve --port 0 2> >(grep -m1 -o "http://[^ ]*")',
    'govctl serve --records-per-minute 1200000 --max-connections 4096',
    'govctl serve --host 0.0.0.0 --db postgres://govctl@db.internal/govctl --log-key /etc/govctl/ledger-key',
  ]);
}

/** `max-connections` → `maxConnections`, as commander names an option's value. */
function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/** A database this service must not run on: in use by another `govctl serve` (78), or not writable (66). */
function databaseRefusal(error: unknown, server: ServerModule): unknown {
  if (error instanceof server.DatabaseInUseError) return new ConfigError(error.message, { field: '--db' });
  if (error instanceof server.DatabaseReadOnlyError) {
    return new InputFileError(`cannot serve from a database this process cannot write: ${error.message}`, {
      field: '--db',
      hint: 'check the permissions of the file and its directory',
    });
  }
  return undefined;
}

/** Why a listen failed, as a configuration error (78) naming what to change. */
function listenError(error: unknown, options: ServeOptions): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const where = `${options.host}:${options.port}`;
  switch (code) {
    case 'EADDRINUSE':
      return new ConfigError(`cannot listen on ${where}: the port is in use`, { field: '--port', hint: 'give another --port (0 picks a free one)' });
    case 'EACCES':
    case 'EPERM':
      return new ConfigError(`cannot listen on ${where}: permission denied`, { field: '--port', hint: 'use a port above 1023' });
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ConfigError(`cannot listen on ${where}: no such address on this machine`, {
        field: '--host',
        hint: 'give --host 127.0.0.1, 0.0.0.0 or an address of this machine',
      });
    default:
      return undefined;
  }
}

/**
 * Resolves with the signal's name once SIGINT or SIGTERM arrives, or `abort` when the run's
 * signal is aborted (main.ts aborts it on Ctrl-C); `again` is called for each later signal.
 */
function waitForStop(abort: AbortSignal, again: () => void): { stopped: Promise<string>; dispose(): void } {
  let resolveStop!: (why: string) => void;
  const stopped = new Promise<string>((resolve) => (resolveStop = resolve));
  let done = false;
  const stop = (why: string) => {
    if (done) return again();
    done = true;
    resolveStop(why);
  };
  // main.ts aborts the run's signal on SIGINT, and its listener runs before this one: the abort
  // and the SIGINT that follows it are one signal, counted once.
  let abortedBySigint = false;
  const onInt = () => {
    if (abortedBySigint) {
      abortedBySigint = false;
      return;
    }
    stop('SIGINT');
  };
  const onTerm = () => stop('SIGTERM');
  const onAbort = () => {
    if (done) return;
    abortedBySigint = true;
    stop('SIGINT');
  };
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  if (abort.aborted) onAbort();
  else abort.addEventListener('abort', onAbort, { once: true });
  return {
    stopped,
    dispose() {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      abort.removeEventListener('abort', onAbort);
    },
  };
}

/** Whether the database holds any API key (for a first-run hint; a failure to tell is not an error). */
async function hasApiKeys(server: ServerModule, path: string): Promise<boolean> {
  try {
    return (await server.listApiKeys(path)).length > 0;
  } catch {
    return true;
  }
}

/**
 * The transparency log's key (docs/ledger.md): read from `--log-key` or `<db>.ledger-key`. A new
 * database gets its key file made beside it; an existing database without one is refused (78), so
 * that a key is never silently replaced: `govctl admin ledger-key create --db FILE` makes it.
 */
function logKeyOf(
  options: ServeOptions,
  path: string,
  deps: Factory,
  server: ServerModule,
): { key: ReturnType<ServerModule['readLedgerKey']>; originPrefix: string } {
  try {
    ledgerOrigin(options.logOrigin ?? DEFAULT_LOG_ORIGIN_PREFIX, 'ws');
  } catch (error) {
    throw new UsageError((error as Error).message, { field: '--log-origin' });
  }
  const file = logKeyFile(path, options.logKey, deps, server);
  // A new SQLite database gets its key made beside it; a PostgreSQL database's replicas must share
  // one key, so none is ever made here for them (a second replica would make a second key).
  if (!isPostgresLocation(path) && file === server.ledgerKeyPath(path) && !existsSync(path) && !existsSync(file))
    server.createLedgerKey(file, options.logOrigin);
  try {
    return { key: server.readLedgerKey(file), originPrefix: options.logOrigin ?? DEFAULT_LOG_ORIGIN_PREFIX };
  } catch (error) {
    if (error instanceof server.LedgerKeyError) {
      const missing = error.message.startsWith('no log key file');
      throw new ConfigError(error.message, {
        field: '--log-key',
        hint: missing
          ? isPostgresLocation(path)
            ? `create it once with \`govctl admin ledger-key create --db URL --log-key FILE\` and give every replica the same file (docs/service.md, "PostgreSQL")`
            : `create it with \`govctl admin ledger-key create --db ${displayPath(path)}\`, or give --log-key FILE (see docs/ledger.md)`
          : 'it must be a file of this user, mode 0600, made by `govctl admin ledger-key create` (see docs/ledger.md)',
      });
    }
    throw error;
  }
}

/** Where `serve` takes its verdict key from when --verdict-key is not given. */
export const VERDICT_KEY_FILE_ENV = 'GOVCTL_VERDICT_KEY_FILE';

/**
 * The key that signs gate verdicts (docs/ci.md): `--verdict-key`, else GOVCTL_VERDICT_KEY_FILE,
 * else `<db>.verdict-key` beside a database file, made when missing. A PostgreSQL database has no
 * "beside" and its replicas must share one key: without a file named, verdicts are not signed.
 */
function verdictKeyOf(options: ServeOptions, path: string, deps: Factory, server: ServerModule): ReturnType<ServerModule['readVerdictKey']> | null {
  const named = options.verdictKey ?? (deps.env[VERDICT_KEY_FILE_ENV] || undefined);
  let file: string;
  if (named !== undefined) file = resolvePath(deps.cwd, named);
  else if (isPostgresLocation(path)) return null;
  else {
    file = server.verdictKeyPath(path);
    if (!existsSync(file)) server.createVerdictKey(file);
  }
  try {
    return server.readVerdictKey(file);
  } catch (error) {
    if (error instanceof server.VerdictKeyError) {
      throw new ConfigError(error.message, {
        field: '--verdict-key',
        hint: 'it must be a file of this user, mode 0600, holding one signer key (docs/ci.md, "The verdict key")',
      });
    }
    throw error;
  }
}

export async function run(options: ServeOptions, deps: Factory): Promise<void> {
  let path: string;
  // --db, else DATABASE_URL (a PostgreSQL URL), else the data directory's file
  if (options.db !== undefined || deps.env[DATABASE_URL_ENV]) path = databaseLocation(options.db, deps, false, 'serve');
  else {
    const { dataDir } = await deps.settings();
    await mkdir(dataDir, { recursive: true, mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
      const why = error.code === 'EEXIST' || error.code === 'ENOTDIR' ? 'a file is in the way' : (error.code ?? 'error');
      throw new ConfigError(`the data directory ${displayPath(dataDir)} cannot be made (${why})`, {
        field: 'dataDir',
        hint: 'give --data-dir (or GOVCTL_DATA_DIR) a directory of your own, or --db FILE',
      });
    });
    path = join(dataDir, SERVER_DB_FILE);
  }
  const server = await loadServer();
  // A database this process cannot write is refused before its log key is looked for: that is
  // the problem to fix first (startServer checks again, and takes the single-instance lock).
  try {
    if (!isPostgresLocation(path)) server.assertWritable(path);
  } catch (error) {
    throw databaseRefusal(error, server) ?? error;
  }
  assertDatabaseFile(path);
  const ledger = logKeyOf(options, path, deps, server);
  const verdictKey = verdictKeyOf(options, path, deps, server);
  // Request lines are gathered (server/log-writer.ts) and flushed before anything else is printed.
  const log = server.createLogWriter((text) => void deps.io.stderr.write(text).catch(() => undefined));
  const logLine = log.line;
  const note = (text: string) => {
    log.flush();
    return deps.note(text);
  };
  let running: Awaited<ReturnType<typeof server.startServer>>;
  try {
    running = await server.startServer({
      host: options.host,
      port: options.port,
      db: path,
      logLine,
      ...(options.verifyWorkers !== undefined ? { verifyWorkers: options.verifyWorkers } : {}),
      ledger,
      ...(verdictKey !== null ? { verdictKey } : {}),
      ...(options.limits !== undefined ? { limits: options.limits } : {}),
    });
  } catch (error) {
    throw listenError(error, options) ?? databaseRefusal(error, server) ?? mapDatabaseError(error, path, server);
  }

  const waiter = waitForStop(deps.signal, () => {
    void note('second signal: closing open connections');
    running.service.app.server.closeAllConnections();
  });
  try {
    const workers = running.service.verifyWorkers;
    await note(
      `listening on ${running.url} (database ${displayDatabase(path)}, ${workers === 1 ? '1 verify worker' : `${workers} verify workers`}); Ctrl-C or SIGTERM stops it`,
    );
    if (!(await hasApiKeys(server, path))) await note(`no API keys yet: run \`govctl admin init --db ${displayDatabase(path)}\``);
    const why = await waiter.stopped;
    await note(`${why}: shutting down, finishing requests in flight`);
    await running.close();
    await note('stopped');
  } finally {
    waiter.dispose();
    await running.close();
    log.flush();
  }
}
