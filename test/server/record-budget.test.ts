/**
 * The per-workspace record budget (docs/security.md, "Abusive clients"): every item of a batch and
 * every single-record write is charged, a request over the budget is a 429 with Retry-After that
 * stores nothing and charges nothing, other workspaces are untouched, and the next window starts
 * afresh. The budgets' clock is injected, so no test waits for a minute to pass.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SigningKey, signWitness } from '../../src/core/index.js';
import { createApp, createLedgerKey, DEFAULT_LIMITS, provision, type ServiceApp } from '../../src/server/index.js';
import { storedRow, testStoreLocation } from '../helpers/backend.js';
import { BIN, codeCacheEnv, ensureBuilt } from '../helpers/cli.js';
import { attestation, call, evidenceRecord, wsPath } from '../helpers/service-requests.js';

let service: ServiceApp | undefined;
let dir: string | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

interface Tenant {
  apiKey: string;
  workspaceId: string;
}

/** the database of the service {@link start} made */
let location: string;

async function start(recordsPerMinute: number): Promise<{ clock: { ms: number }; a: Tenant; b: Tenant }> {
  dir = mkdtempSync(join(tmpdir(), 'govctl-budget-'));
  const db = await testStoreLocation('budget', dir);
  const a = await provision(db, { orgName: 'a', workspaceName: 'a' });
  const b = await provision(db, { orgName: 'b', workspaceName: 'b' });
  const clock = { ms: Date.UTC(2026, 5, 1, 12, 0, 0) };
  service = await createApp({ db, limits: { recordsPerMinute }, budgetNowMs: () => clock.ms });
  location = db;
  return { clock, a: { apiKey: a.api_key, workspaceId: a.workspace_id }, b: { apiKey: b.api_key, workspaceId: b.workspace_id } };
}

const key = SigningKey.fromHex('44'.repeat(32));

function batchOf(n: number, workspaceId: string) {
  return {
    records: Array.from({ length: n }, (_, i) => {
      const record = attestation({ tool_name: `tool-${i}` });
      return { ...record, ...signWitness(record, workspaceId, key) };
    }),
  };
}

async function post(tenant: Tenant, path: string, body: unknown) {
  const reply = await service!.app.inject({
    method: 'POST',
    url: wsPath(tenant.workspaceId, path),
    headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  return { status: reply.statusCode, json: reply.json<Record<string, any>>(), headers: reply.headers };
}

describe('record budget', () => {
  it('has a documented default far above the request budget', () => {
    expect(DEFAULT_LIMITS.recordsPerMinute).toBe(600_000);
    expect(DEFAULT_LIMITS.requestsPerMinute).toBe(2000);
  });

  it('charges every item of a batch: a batch over what is left is a 429 with Retry-After that stores nothing and charges nothing', async () => {
    const { clock, a, b } = await start(1000);
    expect((await post(a, 'attestations/batch', batchOf(600, a.workspaceId))).status).toBe(200);
    clock.ms += 10_000;

    const over = await post(a, 'attestations/batch', batchOf(500, a.workspaceId));
    expect(over.status).toBe(429);
    expect(over.json).toMatchObject({ error: 'rate_limited' });
    expect(over.json.message).toMatch(/records/);
    expect(over.headers['retry-after']).toBe('50');

    // the refused batch charged nothing: 400 records are left, and a batch of 400 passes
    const fits = await post(a, 'attestations/batch', batchOf(400, a.workspaceId));
    expect(fits.status).toBe(200);
    expect(fits.json.accepted).toBe(400);
    // now the budget is spent: one more record, single or evidence, is refused
    expect((await post(a, 'attestations/external', attestation())).status).toBe(429);
    expect((await post(a, 'grc/evidence', evidenceRecord())).status).toBe(429);

    // another workspace has its own budget
    expect((await post(b, 'attestations/batch', batchOf(1000, b.workspaceId))).status).toBe(200);

    // the next window starts afresh
    clock.ms += 50_000;
    expect((await post(a, 'attestations/batch', batchOf(1000, a.workspaceId))).status).toBe(200);

    const perWorkspace = async (workspaceId: string) =>
      (await storedRow<{ n: number }>(location, 'SELECT count(*) AS n FROM attestations WHERE workspace_id = ?', [workspaceId]))!.n;
    expect(await perWorkspace(a.workspaceId)).toBe(2000);
    expect(await perWorkspace(b.workspaceId)).toBe(1000);
  });

  it('charges single-record writes one each, evidence and attestations alike', async () => {
    const { a } = await start(1000);
    expect((await post(a, 'attestations/batch', batchOf(998, a.workspaceId))).status).toBe(200);
    expect((await post(a, 'grc/evidence', evidenceRecord())).status).toBe(201);
    expect((await post(a, 'attestations/external', attestation())).status).toBe(201);
    const refused = await post(a, 'grc/evidence', evidenceRecord());
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});

describe('govctl serve flags', () => {
  it('--requests-per-minute and --records-per-minute set the two budgets of a running service', async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'govctl-budget-'));
    const db = await testStoreLocation('budget-flags', dir);
    const tenant = await provision(db, { orgName: 'flags', workspaceName: 'flags' });
    const logKey = join(dir, 'ledger-key');
    createLedgerKey(logKey); // as `govctl admin init` does
    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--db', db, '--log-key', logKey, '--port', '0', '--requests-per-minute', '4', '--records-per-minute', '1000'],
      {
        env: { PATH: process.env.PATH ?? '', HOME: dir, NO_COLOR: '1', ...codeCacheEnv() },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (text: string) => {
          stderr += text;
          const found = /listening on (http:\/\/\S+)/.exec(stderr)?.[1];
          if (found) resolve(found);
        });
        child.once('exit', () => reject(new Error(stderr)));
      });
      const server = { url, apiKey: tenant.api_key };
      const batch = (n: number) => ({ records: Array.from({ length: n }, (_, i) => attestation({ tool_name: `t${i}` })) });
      expect((await call(server, 'POST', wsPath(tenant.workspace_id, 'attestations/batch'), { body: batch(999) })).status).toBe(200);
      const records = await call(server, 'POST', wsPath(tenant.workspace_id, 'attestations/batch'), { body: batch(2) });
      expect(records.status).toBe(429);
      expect(records.json.message).toMatch(/more than 1000 records in a minute/);
      expect((await call(server, 'GET', '/api/me')).status).toBe(200);
      expect((await call(server, 'GET', '/api/me')).status).toBe(200);
      const requests = await call(server, 'GET', '/api/me');
      expect(requests.status).toBe(429);
      expect(requests.json.message).toMatch(/more than 4 requests in a minute/);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);
});
