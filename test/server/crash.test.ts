/**
 * Durability: a real server process (the built bundle) is killed with SIGKILL in the middle of a
 * stream of concurrent evidence writes; restarted on the same file, it still has every record it
 * acknowledged, and the database passes `PRAGMA integrity_check`.
 */
import { mkdtempSync, rmSync, statSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { build } from 'esbuild';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provision } from '../../src/server/index.js';
import { call, evidenceRecord, wsPath } from '../helpers/service-requests.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUNDLE = join(ROOT, 'dist/lib/server.js');
const LAUNCHER = fileURLToPath(new URL('./fixtures/serve.mjs', import.meta.url));

/** Newest modification time under a directory. */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) latest = Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return latest;
}

/**
 * Makes sure dist/lib/server.js is built from the current sources. Only the server entry is
 * rebuilt (with the options of scripts/build.mjs), so the rest of dist is left alone.
 */
async function ensureServerBundle(): Promise<void> {
  let builtAt = 0;
  try {
    builtAt = statSync(BUNDLE).mtimeMs;
  } catch {
    // not built yet
  }
  if (builtAt > Math.max(newest(join(ROOT, 'src/server')), newest(join(ROOT, 'src/core')))) return;
  await build({
    entryPoints: { 'lib/server': join(ROOT, 'src/server/index.ts') },
    outdir: join(ROOT, 'dist'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: ['better-sqlite3', 'fastify', '@fastify/*'],
    banner: { js: "import { createRequire as __govctlCreateRequire } from 'node:module'; const require = __govctlCreateRequire(import.meta.url);" },
    logLevel: 'warning',
  });
}

interface Running {
  child: ResultPromise;
  url: string;
}

async function spawnServer(dbPath: string): Promise<Running> {
  const child = execa(process.execPath, [LAUNCHER, dbPath], { reject: false, stdout: 'pipe', stderr: 'pipe', cleanup: true });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n')) resolve((JSON.parse(line!) as { url: string }).url);
    });
    void child.then((result) => reject(new Error(`server exited early (${result.exitCode}): ${String(result.stderr)}`)));
  });
  return { child, url };
}

let dir: string;
beforeAll(async () => {
  await ensureServerBundle();
  dir = mkdtempSync(join(tmpdir(), 'govctl-crash-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('crash safety', () => {
  it('keeps every acknowledged record and a consistent database after SIGKILL mid-stream', async () => {
    const dbPath = join(dir, 'crash.db');
    const identity = provision(dbPath);
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
      await second.child;
    }

    const db = new Database(dbPath, { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const stored = db.prepare('SELECT count(*) AS n FROM evidence').get() as { n: number };
      expect(stored.n).toBeGreaterThanOrEqual(acknowledged.length + 1);
      expect(stored.n).toBeLessThanOrEqual(sequence + 1);
      const orphans = db.prepare('SELECT count(*) AS n FROM evidence e WHERE NOT EXISTS (SELECT 1 FROM systems s WHERE s.workspace_id = e.workspace_id AND s.name = e.system_name)').get() as { n: number };
      expect(orphans.n).toBe(0);
    } finally {
      db.close();
    }
  }, 60_000);
});
