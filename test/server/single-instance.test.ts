/**
 * One `govctl serve` per database, and only on a database it can write and that is still the one it
 * opened (docs/security.md, "Abusive clients"): a second service on the same file refuses to start,
 * a SIGKILLed one does not block its restart (the kernel drops its lock), a read-only database is
 * refused, and a database file deleted or replaced while running makes writes 503, never 2xx.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLedgerKey, DatabaseInUseError, ledgerKeyPath, provision, startServer } from '../../src/server/index.js';
import { BIN, codeCacheEnv, ensureBuilt } from '../helpers/cli.js';
import { sqliteOnly } from '../helpers/backend.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { call, evidenceRecord, wsPath } from '../helpers/service-requests.js';

let dir: string;
const dirs: string[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  await ensureBuilt();
});
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
afterAll(async () => {
  for (const made of dirs) rmSync(made, { recursive: true, force: true });
});

async function freshDb(): Promise<string> {
  dir = mkdtempSync(join(tmpdir(), 'govctl-single-'));
  dirs.push(dir);
  const db = join(dir, 'server.db');
  await provision(db, { orgName: 'single', workspaceName: 'single' });
  createLedgerKey(ledgerKeyPath(db)); // as `govctl admin init` does
  return db;
}

interface Served {
  child: ChildProcess;
  /** resolves with the URL once it listens, or with null when the process exits first */
  listening: Promise<string | null>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** `govctl serve --db FILE --port 0` as a process of its own (killed after the test). */
function serve(db: string, options: { uid?: number; gid?: number; home?: string } = {}): Served {
  const home = options.home ?? dir;
  // The worker's shared code cache, except for a run as another user (who cannot enter it).
  const child = spawn(process.execPath, [BIN, 'serve', '--db', db, '--port', '0'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_DATA_HOME: join(home, 'data'),
      NO_COLOR: '1',
      ...(options.uid === undefined ? codeCacheEnv() : {}),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(options.uid !== undefined ? { uid: options.uid, gid: options.gid ?? options.uid } : {}),
  });
  children.push(child);
  let stderr = '';
  let announce: (url: string | null) => void;
  const listening = new Promise<string | null>((resolve) => (announce = resolve));
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
    const url = /listening on (http:\/\/\S+)/.exec(stderr)?.[1];
    if (url) announce(url);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('exit', (code, signal) => {
      announce(null);
      resolve({ code, signal, stderr });
    }),
  );
  return { child, listening, exited };
}

// SQLite-only, the whole file: the serve lock, the file's permissions and the file replaced or
// deleted are SQLite's. On PostgreSQL replicas share one database by design
// (test/server/postgres/replicas.test.ts) and the server going away is
// test/server/postgres/replica-crashes.test.ts.
describe.skipIf(sqliteOnly)('one service per database', () => {
  it('a second startServer on the same file refuses with a clear message; once the first stops, it starts', async () => {
    const db = await freshDb();
    const first = await startServer({ db, port: 0 });
    try {
      await expect(startServer({ db, port: 0 })).rejects.toThrow(DatabaseInUseError);
      await expect(startServer({ db, port: 0 })).rejects.toThrow(/another govctl serve is already running on .*server\.db/);
    } finally {
      await first.close();
    }
    const second = await startServer({ db, port: 0 });
    await second.close();
  });

  it('govctl serve: the second process exits 78 naming the database; after the first is SIGKILLed, a new one starts', async () => {
    const db = await freshDb();
    const first = serve(db);
    expect(await first.listening).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const second = serve(db);
    const refused = await second.exited;
    expect(refused.code).toBe(78);
    expect(refused.stderr).toMatch(/^govctl: another govctl serve is already running on .*server\.db/m);

    first.child.kill('SIGKILL');
    await first.exited;
    const third = serve(db);
    expect(await third.listening).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    third.child.kill('SIGTERM');
    expect((await third.exited).code).toBe(0);
  }, 30_000);
});

describe.skipIf(sqliteOnly)('a database the service cannot write', () => {
  // As root every file is writable, so the service runs as an unprivileged user (nobody) instead.
  const asRoot = process.getuid?.() === 0;
  const runAs = asRoot ? { uid: 65534, gid: 65534 } : {};

  it.each([
    [
      'the file is read-only',
      (db: string, folder: string) => {
        chmodSync(folder, 0o777);
        chmodSync(db, 0o444);
      },
    ],
    [
      'its directory is read-only',
      (db: string, folder: string) => {
        chmodSync(db, 0o666);
        chmodSync(folder, 0o555);
      },
    ],
  ])(
    '%s: govctl serve refuses to start (exit 66) and says why',
    async (_name, makeReadOnly) => {
      const db = await freshDb();
      const home = mkdtempSync(join(tmpdir(), 'govctl-single-home-'));
      chmodSync(home, 0o777);
      chmodSync(dir, 0o755);
      makeReadOnly(db, dir);
      try {
        const served = serve(db, { ...runAs, home });
        const result = await served.exited;
        expect(result.stderr).toMatch(/cannot serve from a database this process cannot write/);
        expect(result.code).toBe(66);
      } finally {
        chmodSync(dir, 0o755);
        rmSync(home, { recursive: true, force: true });
      }
    },
    30_000,
  );
});

describe.skipIf(sqliteOnly)('a database file deleted or replaced while the service runs', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('replaced: writes are 503 service_unavailable and nothing is acknowledged; reads still answer', async () => {
    const path = wsPath(server.workspaceId, 'grc/evidence');
    expect((await call(server, 'POST', path, { body: evidenceRecord() })).status).toBe(201);
    // another file moved onto the path (what a restore from backup does)
    const copy = `${server.dbPath}.copy`;
    copyFileSync(server.dbPath, copy);
    renameSync(copy, server.dbPath);
    const write = await call(server, 'POST', path, { body: evidenceRecord() });
    expect(write.status).toBe(503);
    expect(write.json).toEqual({ error: 'service_unavailable', message: expect.stringMatching(/was replaced while the service was running/) });
    const batch = await call(server, 'POST', wsPath(server.workspaceId, 'attestations/external'), {
      body: { system_name: 'chatbot', tool_name: 't', input_hash: 'a'.repeat(64), output_hash: 'b'.repeat(64) },
    });
    expect(batch.status).toBe(503);
    expect((await call(server, 'GET', '/api/me')).status).toBe(200);
  });

  it('deleted: writes are 503', async () => {
    unlinkSync(server.dbPath);
    const write = await call(server, 'POST', wsPath(server.workspaceId, 'grc/evidence'), { body: evidenceRecord() });
    expect(write.status).toBe(503);
    expect(write.json.message).toMatch(/was deleted while the service was running/);
  });
});
