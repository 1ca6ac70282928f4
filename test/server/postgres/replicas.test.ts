/**
 * `govctl serve` replicas on one PostgreSQL database, as processes: budgets exact across replicas
 * (sequential and concurrent requests), a key revoked with `govctl admin` refused by every replica
 * on its next request, an idempotency key sent to two replicas storing one record.
 * (replica-crashes.test.ts has replicas and PostgreSQL SIGKILLed during writes, and the log's lease
 * taken over from a replica that died holding it.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanEnv, codeCacheEnv, makeHome, makeTempDir, runProcess } from '../../helpers/cli.js';
import { freshDatabase } from '../../helpers/postgres.js';
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
    child.stderr.on('data', (chunk: Buffer) => {
      head += chunk.toString('utf8');
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(head);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then(() => reject(new Error(`govctl serve exited: ${head}`)));
  });
  child.stderr.resume();
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
  // the log key every replica is given, before any replica starts
  await admin(['ledger-key', 'create', '--log-key', keyFile]);
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

  describe('with a budget of 40 requests a minute', () => {
    const BUDGET = 40;
    let limited: [Replica, Replica];
    beforeAll(async () => {
      limited = await Promise.all([startReplica(['--requests-per-minute', String(BUDGET)]), startReplica(['--requests-per-minute', String(BUDGET)])]);
    });
    afterAll(async () => {
      await Promise.all(limited.map((replica) => stopReplica(replica)));
    });

    it('counts a workspace budget exactly across two replicas', async () => {
      const ws = await workspace();
      const [a, b] = limited;
      const statuses: number[] = [];
      for (let i = 0; i < 50; i++) statuses.push((await call({ url: (i % 2 ? a : b).url, apiKey: ws.apiKey }, 'GET', '/api/me')).status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(BUDGET);
      expect(statuses.slice(BUDGET)).toEqual(Array(10).fill(429));
    });

    it('counts it exactly under concurrent writes too: refused at the budget in total, and by both replicas', async () => {
      const ws = await workspace();
      // 56 writes, 4 at a time, alternating replicas: well inside one minute's window
      const statuses: number[] = [];
      for (let i = 0; i < 56; i += 4) {
        const replies = await Promise.all(
          [0, 1, 2, 3].map((j) =>
            call({ url: limited[(i + j) % 2].url, apiKey: ws.apiKey }, 'POST', wsPath(ws.workspaceId, 'grc/evidence'), { body: evidenceRecord() }),
          ),
        );
        statuses.push(...replies.map((reply) => reply.status));
      }
      expect(statuses.filter((status) => status === 201).length).toBe(BUDGET);
      expect(statuses.filter((status) => status === 429).length).toBe(56 - BUDGET);
      // and each replica refused some: the count is not per process
      const perReplica = [0, 1].map((r) => statuses.filter((status, i) => i % 2 === r && status === 429).length);
      expect(perReplica.every((n) => n > 0)).toBe(true);
    });
  });

  describe('two replicas without a budget', () => {
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
      const replies = await Promise.all(
        [a, b].map((replica) => call({ url: replica.url, apiKey: ws.apiKey }, 'POST', wsPath(ws.workspaceId, 'grc/evidence'), { body, headers })),
      );
      expect(replies.map((r) => r.status)).toEqual([201, 201]);
      expect(replies.map((r) => r.headers.get('idempotent-replayed')).sort()).toEqual(['true', null].sort());
      expect(replies[0].json.record_id).toBe(replies[1].json.record_id);
      const list = await call({ url: a.url, apiKey: ws.apiKey }, 'GET', wsPath(ws.workspaceId, 'grc/evidence?since=2026-01-01T00:00:00Z'));
      expect(list.json.total).toBe(1);
    });
  });
});
