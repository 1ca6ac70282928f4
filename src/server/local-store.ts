/**
 * The embedded local store (docs/architecture.md, cli.md "Settings"): with no service configured,
 * the CLI runs against a service database in its data directory. It is the same application as
 * `govctl serve` (createApp), called in-process through `app.inject` as a transport, so there is
 * one implementation of every endpoint. Provisioned on first use; the key is kept in
 * `<dataDir>/local.json` (mode 0600) beside `<dataDir>/govctl.db`, in a directory of mode 0700.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApp } from './app.js';

/** The embedded store's rate limit: high enough never to bind one user's work. */
const LOCAL_RATE_LIMIT_PER_MINUTE = 1_000_000_000;
import { openDatabase } from './store/database.js';
import { IdentityStore, type Provisioned } from './store/identity.js';

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

function readCredentials(file: string): Provisioned | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const value = JSON.parse(text) as Partial<Provisioned>;
  if ([value.api_key, value.workspace_id, value.org_id, value.user_id].every((field) => typeof field === 'string')) return value as Provisioned;
  throw new Error(`${file} is not a govctl local-store file; move it away to start a new local store`);
}

/** Writes the credentials file atomically, readable by the owner only. */
function writeCredentials(file: string, credentials: Provisioned): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

/**
 * The credentials of the local store, provisioning it when the file is missing or its key no
 * longer opens the database (a deleted database starts over).
 */
function ensureProvisioned(dataDir: string, dbPath: string): Provisioned {
  const file = join(dataDir, LOCAL_FILE);
  const db = openDatabase(dbPath);
  try {
    const identity = new IdentityStore(db);
    const existing = readCredentials(file);
    if (existing && identity.authenticate(existing.api_key, Date.now())) return existing;
    const created = identity.provision({ orgName: 'local', workspaceName: 'local' }, Date.now());
    writeCredentials(file, created);
    return created;
  } finally {
    db.close();
  }
}

/**
 * Opens the embedded store in `dataDir` (created with mode 0700 when missing).
 *
 * @example
 * const local = await openLocalStore(join(homedir(), '.local/share/govctl'));
 * const api = createServiceApi({ transport: local.transport, apiKey: local.apiKey, workspaceId: local.workspaceId });
 * // …
 * await local.close();
 */
export async function openLocalStore(dataDir: string): Promise<LocalStore> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const dbPath = join(dataDir, DB_FILE);
  const credentials = ensureProvisioned(dataDir, dbPath);
  // One user on one machine: the per-workspace rate limit protects a shared service, and here it
  // would only slow a large `evidence import` down (docs/decisions.md).
  const service = await createApp({ db: dbPath, limits: { requestsPerMinute: LOCAL_RATE_LIMIT_PER_MINUTE, recordsPerMinute: LOCAL_RATE_LIMIT_PER_MINUTE } });
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
      return { status: reply.statusCode, headers, body: reply.body };
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
