/**
 * Durability: `govctl serve` (bin/govctl.js, the built command line) is killed with SIGKILL in the
 * middle of a stream of concurrent evidence writes; restarted on the same file, it still has every
 * record it acknowledged, and the database passes `PRAGMA integrity_check`. The restarted service
 * is stopped with SIGTERM, through the same graceful shutdown as any `govctl serve`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database } from '../../src/server/store/sqlite/driver.js';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteOnly } from '../helpers/backend.js';
import { createLedgerKey, ledgerKeyPath, provision } from '../../src/server/admin.js';
import { BIN, cleanEnv, codeCacheEnv, ensureBuilt } from '../helpers/cli.js';
import { call, evidenceRecord, wsPath } from '../helpers/service-requests.js';

interface Running {
  child: ResultPromise;
  url: string;
}

/** `govctl serve --port 0 --db <file>`, once it has said where it listens. */
async function spawnServer(dbPath: string): Promise<Running> {
  const child = execa(process.execPath, [BIN, 'serve', '--port', '0', '--db', dbPath], {
    env: cleanEnv(dir, codeCacheEnv()),
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'pipe',
    cleanup: true,
  });
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (match) resolve(match[1]);
    });
    void child.then((result) => reject(new Error(`govctl serve exited early (${result.exitCode}): ${err}`)));
  });
  return { child, url };
}

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'govctl-crash-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

// SQLite-only: SIGKILL of govctl serve on a SQLite file and PRAGMA integrity_check. PostgreSQL's
// crash tests (the service and the server killed): test/server/postgres/crash.test.ts and replica-crashes.test.ts.
describe.skipIf(sqliteOnly)('crash safety', () => {
  it('keeps every acknowledged record and a consistent database after SIGKILL mid-stream', async () => {
    const dbPath = join(dir, 'crash.db');
    const identity = await provision(dbPath);
    createLedgerKey(ledgerKeyPath(dbPath)); // as `govctl admin init` does
    const first = await spawnServer(dbPath);
    const server = { url: first.url, apiKey: identity.api_key };
    const path = wsPath(identity.workspace_id, 'grc/evidence');

    const acknowledged: string[] = [];
    let killed = false;
    let sequence = 0;
    const KILL_AFTER = 400;
    // Each writer keeps writing until a request fails, which happens only once the server is dead:
    // so writes are in flight when SIGKILL lands, and whatever was answered before is acknowledged.
    const writer = async (): Promise<void> => {
      for (;;) {
        const n = sequence++;
        try {
          const reply = await call(server, 'POST', path, { body: evidenceRecord(n % 2 ? 'change_event' : 'access_review', { system_name: `crash-${n % 7}` }) });
          if (reply.status !== 201) throw new Error(`unexpected ${reply.status} ${reply.text}`);
          acknowledged.push(reply.json.record_id as string);
        } catch (error) {
          if (!killed) throw error;
          return;
        }
        if (acknowledged.length >= KILL_AFTER && !killed) {
          killed = true;
          first.child.kill('SIGKILL'); // while the other writers' requests are in flight
        }
      }
    };
    await Promise.all(Array.from({ length: 12 }, writer));
    const result = await first.child;
    expect(result.signal).toBe('SIGKILL');
    expect(acknowledged.length).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(sequence).toBeGreaterThanOrEqual(acknowledged.length + 12); // every writer's last write was cut off

    const second = await spawnServer(dbPath);
    try {
      const again = { url: second.url, apiKey: identity.api_key };
      for (const id of acknowledged) {
        const reply = await call(again, 'GET', `${path}/${id}`);
        expect(reply.status, id).toBe(200);
      }
      // Derived tables agree with the records that survived.
      const systems = (await call(again, 'GET', wsPath(identity.workspace_id, 'grc/systems'))).json.systems;
      expect(systems.map((s: { system_name: string }) => s.system_name).sort()).toEqual(Array.from({ length: 7 }, (_, i) => `crash-${i}`));
      expect((await call(again, 'POST', path, { body: evidenceRecord() })).status).toBe(201);
    } finally {
      second.child.kill('SIGTERM');
      expect((await second.child).exitCode).toBe(0);
    }

    const db = new Database(dbPath, { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const stored = db.prepare('SELECT count(*) AS n FROM evidence').get() as { n: number };
      expect(stored.n).toBeGreaterThanOrEqual(acknowledged.length + 1);
      expect(stored.n).toBeLessThanOrEqual(sequence + 1);
      const orphans = db
        .prepare(
          'SELECT count(*) AS n FROM evidence e WHERE NOT EXISTS (SELECT 1 FROM systems s WHERE s.workspace_id = e.workspace_id AND s.name = e.system_name)',
        )
        .get() as { n: number };
      expect(orphans.n).toBe(0);
    } finally {
      db.close();
    }
  }, 60_000);
});
