/**
 * The embedded local store (docs/architecture.md, cli.md "Settings"): with no service configured,
 * the CLI runs against a service database in its data directory. It is the same application as
 * `govctl serve` (createApp), called in-process through `app.inject` as a transport, so there is
 * one implementation of every endpoint. Provisioned on first use; the key is kept in
 * `<dataDir>/local.json` (mode 0600) beside `<dataDir>/govctl.db`, in a directory of mode 0700.
 *
 * The directory is refused when another user owns it or others may write to it (whoever can
 * write there can swap the database or the key file), and every file is created exclusively and
 * without following a symlink (O_EXCL|O_NOFOLLOW), so a planted link cannot redirect a write.
 */
import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { createApp } from './app.js';
import { createLedgerKey, ledgerKeyPath, readLedgerKey } from './admin.js';

/** The embedded store's rate limit: high enough never to bind one user's work. */
const LOCAL_RATE_LIMIT_PER_MINUTE = 1_000_000_000;
import type { Provisioned } from './store/rows.js';
import type { Store } from './store/store.js';

/** One request as the client library's Transport sends it (structurally its TransportRequest). */
export interface LocalRequest {
  method: string;
  /** path and query string */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** One reply (structurally the client library's TransportResponse). */
export interface LocalResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  bytes?: Buffer;
}

/** A transport that calls the application in-process; the client library's `Transport` shape. */
export interface LocalTransport {
  request(request: LocalRequest, signal?: AbortSignal): Promise<LocalResponse>;
  readonly description: string;
}

export interface LocalStore {
  transport: LocalTransport;
  apiKey: string;
  workspaceId: string;
  orgId: string;
  userId: string;
  /** the database file */
  dbPath: string;
  /** stops the application and closes the database */
  close(): Promise<void>;
}

const LOCAL_FILE = 'local.json';
const DB_FILE = 'govctl.db';

/** A data directory or file that is not safe to use, or cannot be made; `fix` says what to do. */
export class UnsafeDataDirError extends Error {
  override readonly name = 'UnsafeDataDirError';
  constructor(
    message: string,
    readonly fix: string,
  ) {
    super(message);
  }
}

/** Creates and exclusively opens a new file, never through a symlink, readable by the owner only. */
function createExclusive(path: string): number {
  const fd = openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_WRONLY, 0o600);
  fchmodSync(fd, 0o600); // the umask may have taken bits away; never added, but be exact
  return fd;
}

/**
 * The data directory, created with mode 0700 when missing; refused when another user owns it or
 * group or others may write to it.
 * @throws UnsafeDataDirError
 */
function ensureDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    // A file in the way (EEXIST, ENOTDIR) or no permission: the user's setting to fix, not a crash.
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    const why = code === 'EEXIST' || code === 'ENOTDIR' ? 'a file is in the way' : code;
    throw new UnsafeDataDirError(`the data directory ${dataDir} cannot be made (${why})`, 'give --data-dir (or GOVCTL_DATA_DIR) a directory of your own');
  }
  const stat = statSync(dataDir);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new UnsafeDataDirError(
      `the data directory ${dataDir} belongs to another user (uid ${stat.uid})`,
      `run: chown ${uid} ${dataDir} (or use a data directory of your own with --data-dir)`,
    );
  }
  if ((stat.mode & 0o022) !== 0) {
    throw new UnsafeDataDirError(
      `the data directory ${dataDir} is writable by ${stat.mode & 0o002 ? 'other users' : 'its group'} (mode ${(stat.mode & 0o777).toString(8)})`,
      `run: chmod 700 ${dataDir}`,
    );
  }
}

/**
 * The database file, pre-created exclusively (mode 0600, no symlink followed) before SQLite opens
 * it; an existing one must be a regular file of this user, not a link to somewhere else.
 * @throws UnsafeDataDirError
 */
function ensureDatabaseFile(dbPath: string): void {
  try {
    closeSync(createExclusive(dbPath));
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const stat = lstatSync(dbPath);
  if (!stat.isFile())
    throw new UnsafeDataDirError(
      `the local store database ${dbPath} is not a regular file (a symlink or other)`,
      `move it away: mv ${dbPath} ${dbPath}.suspect`,
    );
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid)
    throw new UnsafeDataDirError(`the local store database ${dbPath} belongs to another user (uid ${stat.uid})`, `run: chown ${uid} ${dbPath}`);
}

function readCredentials(file: string): Provisioned | null {
  let text: string;
  try {
    // O_NOFOLLOW: a link planted in place of the key file is refused (ELOOP), not read.
    const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new UnsafeDataDirError(`${file} is a symlink`, `remove it: rm ${file}`);
    throw error;
  }
  const value = JSON.parse(text) as Partial<Provisioned>;
  if ([value.api_key, value.workspace_id, value.org_id, value.user_id].every((field) => typeof field === 'string')) return value as Provisioned;
  throw new Error(`${file} is not a govctl local-store file; move it away to start a new local store`);
}

/** Writes the credentials file atomically through a new temporary file, readable by the owner only. */
function writeCredentials(file: string, credentials: Provisioned): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    unlinkSync(temporary); // a leftover of a crashed run (rename replaces a link, never follows it)
  } catch {
    // none
  }
  const fd = createExclusive(temporary);
  try {
    writeSync(fd, `${JSON.stringify(credentials, null, 2)}\n`);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
}

/**
 * The credentials of the local store, provisioning it when the file is missing or its key no
 * longer opens the database (a deleted database starts over).
 */
async function ensureProvisioned(dataDir: string, store: Store): Promise<Provisioned> {
  const file = join(dataDir, LOCAL_FILE);
  const existing = readCredentials(file);
  if (existing && (await store.identity.authenticate(existing.api_key, Date.now()))) return existing;
  const now = Date.now();
  const created = await store.identity.provision({ orgName: 'local', workspaceName: 'local' }, now);
  // The policy it starts with, logged as its first gate_policy change (docs/ledger.md).
  await store.gatePolicy.latest(created.workspace_id, now);
  writeCredentials(file, created);
  return created;
}

/**
 * Opens the embedded store in `dataDir` (created with mode 0700 when missing).
 * @throws UnsafeDataDirError when the directory belongs to another user or others may write to it,
 *   or the database is a symlink or another user's
 *
 * @example
 * const local = await openLocalStore(join(homedir(), '.local/share/govctl'));
 * const api = createServiceApi({ transport: local.transport, apiKey: local.apiKey, workspaceId: local.workspaceId });
 * // …
 * await local.close();
 */
export async function openLocalStore(dataDir: string): Promise<LocalStore> {
  ensureDataDir(dataDir);
  const dbPath = join(dataDir, DB_FILE);
  ensureDatabaseFile(dbPath);
  // One user on one machine: the per-workspace rate limit protects a shared service, and here it
  // would only slow a large `evidence import` down (docs/decisions.md).
  // The log key beside the database, made on first use (the user's own store); the log integrates
  // before every ledger read and at close, since no timer runs between CLI invocations.
  const keyFile = ledgerKeyPath(dbPath);
  if (!existsSync(keyFile)) createLedgerKey(keyFile);
  const service = await createApp({
    db: dbPath,
    limits: { requestsPerMinute: LOCAL_RATE_LIMIT_PER_MINUTE, recordsPerMinute: LOCAL_RATE_LIMIT_PER_MINUTE },
    ledger: { key: readLedgerKey(keyFile), integration: 'on-read' },
    headRoutes: false,
  });
  let credentials: Provisioned;
  try {
    credentials = await ensureProvisioned(dataDir, service.store);
  } catch (error) {
    await service.close();
    throw error;
  }
  const transport: LocalTransport = {
    description: `local store ${dataDir}`,
    async request(request, signal) {
      signal?.throwIfAborted();
      const reply = await service.app.inject({
        method: request.method as 'GET',
        url: request.path,
        headers: request.headers,
        ...(request.body !== undefined ? { payload: request.body } : {}),
      });
      const headers: Record<string, string | string[] | undefined> = {};
      for (const [name, value] of Object.entries(reply.headers)) headers[name] = typeof value === 'number' ? String(value) : value;
      return { status: reply.statusCode, headers, body: reply.body, bytes: reply.rawPayload };
    },
  };
  return {
    transport,
    apiKey: credentials.api_key,
    workspaceId: credentials.workspace_id,
    orgId: credentials.org_id,
    userId: credentials.user_id,
    dbPath,
    close: () => service.close(),
  };
}
