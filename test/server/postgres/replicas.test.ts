/**
 * `govctl serve` replicas on one PostgreSQL database, as processes (only processes show a
 * SIGKILL): budgets exact across replicas, a key revoked with `govctl admin` refused by every
 * replica on its next request, an idempotency key sent to two replicas storing one record, and a
 * replica SIGKILLed during writes losing no acknowledged record while the other carries the log on
 * (it takes the integration lease over) with checkpoints and proofs that verify.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ed25519NoteVerifier, leafHash, openCheckpoint, verifyInclusion } from '../../../src/core/index.js';
import { BIN, cleanEnv, codeCacheEnv, makeHome, makeTempDir, runProcess } from '../../helpers/cli.js';
import { freshDatabase, withClient } from '../../helpers/postgres.js';
import { call, evidenceRecord, wsPath } from '../../helpers/service-requests.js';

interface Replica {
  url: string;
  child: ChildProcess;
  exited: Promise<unknown>;
}

let url: string;
let keyFile: string;
const home = makeHome();
const replicas: Replica[] = [];

async function startReplica(args: string[] = []): Promise<Replica> {
  const child = spawn(process.execPath, [BIN, 'serve', '--db', url, '--log-key', keyFile, '--port', '0', ...args], {
    env: cleanEnv(home, codeCacheEnv()),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = once(child, 'exit');
  let head = '';
  const listening = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line: ${head}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      head += chunk.toString('utf8');
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(head);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    void exited.then(() => reject(new Error(`govctl serve exited: ${head}`)));
  });
  child.stderr!.resume();
  const replica = { url: listening, child, exited };
  replicas.push(replica);
  return replica;
}

async function stopReplica(replica: Replica, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (replica.child.exitCode === null && replica.child.signalCode === null) {
    replica.child.kill(signal);
    await replica.exited;
  }
}

async function admin(args: string[]): Promise<any> {
  const result = await runProcess(['--json', 'admin', ...args, '--db', url], { home });
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

/** A new workspace: its API key, id and the log's verifier key. */
async function workspace(): Promise<{ apiKey: string; workspaceId: string; ledgerKey: string }> {
  const identity = await admin(['init', '--log-key', keyFile]);
  return { apiKey: identity.api_key, workspaceId: identity.workspace_id, ledgerKey: identity.ledger_key };
}

beforeAll(async () => {
  url = await freshDatabase('replicas');
  keyFile = join(makeTempDir('govctl-replicas-'), 'ledger-key');
});
afterAll(async () => {
  for (const replica of replicas) await stopReplica(replica, 'SIGKILL');
});

describe('replicas of govctl serve on one PostgreSQL database', () => {
  it('never shows the database password, and refuses a PostgreSQL URL without --log-key', async () => {
    const withPassword = url.replace('postgres@', 'postgres:hunter2-secret@');
    const refused = await runProcess(['serve', '--db', withPassword, '--port', '0'], { home });
    expect(refused.exitCode).toBe(78);
    expect(refused.stderr).toMatch(/--log-key/);
    expect(refused.stderr).not.toContain('hunter2-secret');
    const unreachable = await runProcess(['admin', 'api-key', 'list', '--db', withPassword.replace(/:\d+\//, ':1/')], { home });
    // unreachable is 69 (docs/exit-codes.md); the URL shown with *** for its password
    expect(unreachable.exitCode).toBe(69);
    expect(unreachable.stderr).toMatch(/cannot reach the PostgreSQL database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\//);
    expect(unreachable.stderr).not.toContain('hunter2-secret');
  });

  it('counts a workspace budget exactly across two replicas', async () => {
    const ws = await workspace();
    const [a, b] = await Promise.all([startReplica(['--requests-per-minute', '40']), startReplica(['--requests-per-minute', '40'])]);
    const statuses: number[] = [];
    for (let i = 0; i < 50; i++) statuses.push((await call({ url: (i % 2 ? a : b).url, apiKey: ws.apiKey }, 'GET', '/api/me')).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(40);
    expect(statuses.slice(40)).toEqual(Array(10).fill(429));
    await Promise.all([stopReplica(a), stopReplica(b)]);
  });

  describe('under load', () => {
    let a: Replica;
    let b: Replica;
    beforeAll(async () => {
      [a, b] = await Promise.all([startReplica(), startReplica()]);
    });

    it('refuses a key revoked with govctl admin at every replica on its next request', async () => {
      const ws = await workspace();
      const created = await admin(['api-key', 'create', '--workspace', ws.workspaceId, '--name', 'ci']);
      for (const replica of [a, b]) expect((await call({ url: replica.url, apiKey: created.api_key }, 'GET', '/api/me')).status).toBe(200);
      await admin(['api-key', 'revoke', created.key_id]);
      for (const replica of [a, b]) expect((await call({ url: replica.url, apiKey: created.api_key }, 'GET', '/api/me')).status).toBe(401);
      expect((await call({ url: b.url, apiKey: ws.apiKey }, 'GET', '/api/me')).status).toBe(200);
    });

    it('stores one record for an idempotency key sent to both replicas at once', async () => {
      const ws = await workspace();
      const body = evidenceRecord('change_event', { occurred_at: '2026-05-01T10:00:00.000Z' });
      const headers = { 'idempotency-key': 'deploy-42' };
      const replies = await Promise.all([a, b].map((replica) => call({ url: replica.url, apiKey: ws.apiKey }, 'POST', wsPath(ws.workspaceId, 'grc/evidence'), { body, headers })));
      expect(replies.map((r) => r.status)).toEqual([201, 201]);
      expect(replies.map((r) => r.headers.get('idempotent-replayed')).sort()).toEqual(['true', null].sort());
      expect(replies[0]!.json.record_id).toBe(replies[1]!.json.record_id);
      const list = await call({ url: a.url, apiKey: ws.apiKey }, 'GET', wsPath(ws.workspaceId, 'grc/evidence?since=2026-01-01T00:00:00Z'));
      expect(list.json.total).toBe(1);
    });

    it('loses no acknowledged record when the replica holding the log lease is SIGKILLed during writes, and the other takes the log over', async () => {
      const ws = await workspace();
      const acknowledged: string[] = [];
      let stop = false;
      const writer = async (replica: Replica) => {
        while (!stop) {
          try {
            const reply = await call({ url: replica.url, apiKey: ws.apiKey }, 'POST', wsPath(ws.workspaceId, 'grc/evidence'), { body: evidenceRecord('change_event') });
            if (reply.status !== 201) return;
            acknowledged.push(reply.json.record_id);
          } catch {
            return; // the replica died under this request: not acknowledged
          }
        }
      };
      const writers = [...Array.from({ length: 4 }, () => writer(a)), ...Array.from({ length: 4 }, () => writer(b))];
      while (acknowledged.length < 150) await new Promise((resolve) => setTimeout(resolve, 5));
      // the replica that integrates the log (holder: host:pid:random) is the one killed
      const holder = await withClient(url, async (client) => (await client.query("SELECT holder FROM leases WHERE name = 'ledger'")).rows[0]?.holder as string);
      const [victim, survivor] = holder.split(':')[1] === String(a.child.pid) ? [a, b] : [b, a];
      expect(String(victim.child.pid)).toBe(holder.split(':')[1]);
      await stopReplica(victim, 'SIGKILL');
      const atKill = acknowledged.length;
      while (acknowledged.length < atKill + 100) await new Promise((resolve) => setTimeout(resolve, 5));
      stop = true;
      await Promise.all(writers);

      for (const id of acknowledged) {
        const reply = await call({ url: survivor.url, apiKey: ws.apiKey }, 'GET', wsPath(ws.workspaceId, `grc/evidence/${id}`));
        expect(reply.status, id).toBe(200);
      }
      const stored = (await call({ url: survivor.url, apiKey: ws.apiKey }, 'GET', wsPath(ws.workspaceId, 'grc/evidence?days=1&limit=1'))).json.total as number;
      expect(stored).toBeGreaterThanOrEqual(acknowledged.length);

      // The surviving replica integrates every leaf (taking the lease over when the dead one held
      // it: within the lease's 3 s), signs, and proves.
      const deadline = Date.now() + 15_000;
      let opened;
      for (;;) {
        const checkpoint = await call({ url: survivor.url, apiKey: ws.apiKey }, 'GET', wsPath(ws.workspaceId, 'ledger/checkpoint'));
        opened = openCheckpoint(checkpoint.text, Ed25519NoteVerifier.fromVerifierKey(ws.ledgerKey));
        if (opened.checkpoint.size === stored || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(opened.checkpoint.size).toBe(stored);
      for (const id of [acknowledged[0]!, acknowledged[atKill - 1]!, acknowledged[acknowledged.length - 1]!]) {
        const proof = (await call({ url: survivor.url, apiKey: ws.apiKey }, 'GET', wsPath(ws.workspaceId, `ledger/proof/inclusion?id=${id}`))).json;
        const hashes = (proof.hashes as string[]).map((h) => Buffer.from(h, 'base64'));
        expect(verifyInclusion(proof.leaf_index, proof.tree_size, leafHash(proof.entry), hashes, opened.checkpoint.rootHash)).toBe(true);
      }
    });
  });
});
