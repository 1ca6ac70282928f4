/**
 * Store.admit on both backends: the auth hook's one step per request (a key checked, one request
 * counted, a single write's record charged). The same contract on SQLite (one store, counting in
 * memory) and on PostgreSQL (two stores on one database standing for two replicas, counting in
 * one row per workspace, in the statement that reads the key).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedWindowLimiter } from '../../src/server/store/memory-budget.js';
import { openSqliteStore } from '../../src/server/store/sqlite/store.js';
import type { AdmitQuery, Store } from '../../src/server/store/store.js';
import { openTestStore } from '../helpers/postgres.js';

interface Backend {
  name: string;
  open(): Promise<{ a: Store; b: Store; close(): Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'sqlite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'govctl-admit-'));
      const store = openSqliteStore(join(dir, 'govctl.db'));
      // one process serves a SQLite database: its "two replicas" are the one store
      return {
        a: store,
        b: store,
        async close() {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'postgres',
    async open() {
      const { store: a, url } = await openTestStore('admit');
      const { store: b } = await openTestStore('admit', {}, url);
      return {
        a,
        b,
        async close() {
          await a.close();
          await b.close();
        },
      };
    },
  },
];

const BIG = 1_000_000;

/** A query with budgets too large to matter, `overrides` applied. */
function query(apiKey: string, at: number, overrides: Partial<AdmitQuery> = {}): AdmitQuery {
  return { apiKey, nowMs: at, budgetNowMs: at, maxRequests: BIG, records: 0, maxRecords: BIG, ...overrides };
}

describe.each(backends)('Store.admit ($name)', (backend) => {
  let a: Store;
  let b: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ a, b, close } = await backend.open());
  });
  afterAll(async () => {
    await close?.();
  });

  it('admits a valid key with its identity and refuses a key revoked at another replica on the very next request', async () => {
    const now = Date.now();
    const provisioned = await a.identity.provision({}, now);
    const created = (await a.identity.createApiKey(provisioned.workspace_id, 'ci', null, now))!;
    const before = await b.admit(query(created.api_key, now));
    expect(before).toMatchObject({ auth: { keyId: created.key_id, workspaceId: provisioned.workspace_id, userId: provisioned.user_id }, counted: true });
    await a.identity.revokeApiKey(created.key_id, now + 1);
    expect(await b.admit(query(created.api_key, now + 2))).toEqual({ auth: null });
    expect(await a.admit(query(created.api_key, now + 2))).toEqual({ auth: null });
    // the workspace's other key is untouched; an unknown key is refused
    expect(await b.admit(query(provisioned.api_key, now + 2))).toMatchObject({ counted: true });
    expect(await b.admit(query(`${provisioned.api_key.slice(0, -1)}x`, now + 2))).toEqual({ auth: null });
  });

  it('refuses an expired key from its expiry on, by the clock of the request', async () => {
    const now = Date.now();
    const provisioned = await a.identity.provision({}, now);
    const created = (await a.identity.createApiKey(provisioned.workspace_id, null, now + 1000, now))!;
    expect(await b.admit(query(created.api_key, now + 999))).toMatchObject({ counted: true });
    expect(await b.admit(query(created.api_key, now + 1000))).toEqual({ auth: null });
  });

  it('counts nothing for a refused key or a path naming another workspace', async () => {
    const now = 5_000_000;
    const one = await a.identity.provision({}, now);
    const other = await a.identity.provision({}, now);
    const created = (await a.identity.createApiKey(one.workspace_id, null, null, now))!;
    await a.identity.revokeApiKey(created.key_id, now);
    const limits = { maxRequests: 2, records: 1, maxRecords: 2 };
    for (let i = 0; i < 3; i++) {
      expect(await a.admit(query(one.api_key, now, { ...limits, pathWorkspaceId: other.workspace_id }))).toMatchObject({
        auth: { workspaceId: one.workspace_id },
        counted: false,
      });
      expect(await b.admit(query(created.api_key, now, limits))).toEqual({ auth: null });
    }
    // the budget is whole: two requests with a record each pass, the third is over
    expect(await b.admit(query(one.api_key, now, { ...limits, pathWorkspaceId: one.workspace_id }))).toMatchObject({
      requests: { exceeded: false, remaining: 1 },
      records: { exceeded: false, remaining: 1 },
    });
    expect(await a.admit(query(one.api_key, now, limits))).toMatchObject({
      requests: { exceeded: false, remaining: 0 },
      records: { exceeded: false, remaining: 0 },
    });
    expect(await b.admit(query(one.api_key, now, limits))).toMatchObject({ requests: { exceeded: true, remaining: 0 }, records: null });
  });

  it('counts every request of two replicas exactly once, and charges records only within both budgets', async () => {
    const { workspace_id: ws, api_key: key } = await a.identity.provision({}, Date.now());
    const at = 1_000_000;
    const admissions = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b).admit(query(key, at, { maxRequests: 50, records: 1, maxRecords: 40 }))),
    );
    const counted = admissions.map((admission) => {
      if (admission.auth === null || !admission.counted) throw new Error('not counted');
      expect(admission.auth.workspaceId).toBe(ws);
      return admission;
    });
    expect(counted.filter((admission) => admission.requests.exceeded)).toHaveLength(10);
    const remaining = counted.filter((admission) => !admission.requests.exceeded).map((admission) => admission.requests.remaining);
    expect(remaining.sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    // 50 requests within the request budget, 40 of whose records fit; the over-budget ones charged nothing
    const charged = counted.filter((admission) => admission.records && !admission.records.exceeded);
    expect(charged).toHaveLength(40);
    expect(counted.filter((admission) => admission.records?.exceeded)).toHaveLength(10);
    expect(counted.filter((admission) => admission.records === null)).toHaveLength(10);
    // the record budget is spent: a batch charge of one more is refused
    expect(await a.budget.chargeRecords(ws, 1, 40, at)).toMatchObject({ exceeded: true, remaining: 0 });
  });

  it('follows FixedWindowLimiter request for request, whichever replica answers', async () => {
    const { workspace_id: ws, api_key: key } = await a.identity.provision({}, Date.now());
    const limiter = new FixedWindowLimiter();
    // [time, records the request carries, or a batch charge]
    const steps: [number, number, 'request' | 'batch'][] = [
      [0, 0, 'request'],
      [10, 2, 'batch'],
      [20, 1, 'request'],
      [30, 0, 'request'],
      [40, 3, 'request'],
      [50, 1, 'batch'],
      [59_999, 1, 'request'],
      [60_000, 1, 'request'],
      [60_001, 4, 'batch'],
      [60_002, 2, 'request'],
      [60_003, 1, 'request'],
      [200_000, 5, 'batch'],
      [200_001, 1, 'request'],
    ];
    for (const [i, [at, n, what]] of steps.entries()) {
      const replica = i % 2 === 0 ? a : b;
      if (what === 'batch') {
        expect({ step: i, ...(await replica.budget.chargeRecords(ws, n, 5, at)) }).toEqual({ step: i, ...limiter.chargeRecords(ws, n, 5, at) });
        continue;
      }
      const requests = limiter.hit(ws, 3, at);
      const records = n > 0 && !requests.exceeded ? limiter.chargeRecords(ws, n, 5, at) : null;
      const got = await replica.admit(query(key, at, { maxRequests: 3, records: n, maxRecords: 5 }));
      expect({ step: i, got }).toEqual({ step: i, got: { auth: expect.anything(), counted: true, requests, records } });
    }
  });

  it('answers each of many requests arriving at once on its own, counted in their arrival order', async () => {
    const now = 7_000_000;
    const one = await a.identity.provision({}, now);
    const two = await a.identity.provision({}, now);
    const revoked = (await a.identity.createApiKey(one.workspace_id, null, null, now))!;
    await a.identity.revokeApiKey(revoked.key_id, now);
    const expired = (await a.identity.createApiKey(two.workspace_id, null, now, now - 1))!;
    const limiter = new FixedWindowLimiter();
    const limits = { maxRequests: 4, maxRecords: 3 };
    // [key, records, path], all sent before any is answered
    const sent: [string, number, string | undefined][] = [
      [one.api_key, 1, one.workspace_id],
      [two.api_key, 2, undefined],
      [revoked.api_key, 1, undefined],
      [one.api_key, 2, undefined],
      [`${one.api_key.slice(0, -1)}x`, 0, undefined],
      [one.api_key, 0, two.workspace_id],
      [one.api_key, 0, `${one.workspace_id}\u0000`],
      [expired.api_key, 0, undefined],
      [two.api_key, 2, two.workspace_id],
      [one.api_key, 1, undefined],
      [one.api_key, 0, undefined],
      [one.api_key, 1, undefined],
    ];
    const got = await Promise.all(
      sent.map(([key, records, path]) => a.admit(query(key, now, { ...limits, records, ...(path !== undefined ? { pathWorkspaceId: path } : {}) }))),
    );
    const expected = sent.map(([key, n, path]) => {
      const owner = key === one.api_key ? one : key === two.api_key ? two : null;
      if (owner === null) return { auth: null };
      const auth = expect.objectContaining({ workspaceId: owner.workspace_id });
      if (path !== undefined && path !== owner.workspace_id) return { auth, counted: false };
      const requests = limiter.hit(owner.workspace_id, limits.maxRequests, now);
      const records = n > 0 && !requests.exceeded ? limiter.chargeRecords(owner.workspace_id, n, limits.maxRecords, now) : null;
      return { auth, counted: true, requests, records };
    });
    expect(got).toEqual(expected);
  });

  it('counts a batch in which a window ends part-way, request by request, as FixedWindowLimiter does', async () => {
    const now = 8_000_000;
    const [one, two] = await Promise.all([a.identity.provision({}, now), a.identity.provision({}, now)]);
    const limiter = new FixedWindowLimiter();
    const limits = { maxRequests: 3, maxRecords: 4 };
    // [owner, at, records], all sent before any is answered; each workspace's times rise in arrival order
    const sent: [typeof one, number, number][] = [
      [one, now, 2],
      [two, now, 1],
      [one, now + 10, 2],
      [one, now + 20, 1],
      [two, now + 60_000, 4],
      [one, now + 30, 0],
      [one, now + 60_000, 3],
      [two, now + 60_001, 1],
      [one, now + 60_001, 2],
      [one, now + 60_002, 0],
      [one, now + 60_003, 1],
    ];
    const got = await Promise.all(sent.map(([owner, at, records]) => a.admit(query(owner.api_key, at, { ...limits, records }))));
    const expected = sent.map(([owner, at, n]) => {
      const requests = limiter.hit(owner.workspace_id, limits.maxRequests, at);
      const records = n > 0 && !requests.exceeded ? limiter.chargeRecords(owner.workspace_id, n, limits.maxRecords, at) : null;
      return { auth: expect.objectContaining({ workspaceId: owner.workspace_id }), counted: true, requests, records };
    });
    expect(got).toEqual(expected);
    // the batch left each workspace's row as its last request found it: a lone request continues from there
    for (const owner of [one, two]) {
      const at = now + 60_004;
      const requests = limiter.hit(owner.workspace_id, limits.maxRequests, at);
      const records = requests.exceeded ? null : limiter.chargeRecords(owner.workspace_id, 1, limits.maxRecords, at);
      expect(await b.admit(query(owner.api_key, at, { ...limits, records: 1 }))).toEqual({ auth: expect.anything(), counted: true, requests, records });
    }
  });

  it('lets two replicas admit requests of the same workspaces at once, in opposite orders, without a deadlock', async () => {
    const now = 9_000_000;
    const [one, two] = await Promise.all([a.identity.provision({}, now), a.identity.provision({}, now)]);
    const rounds = 200;
    const admissions: Promise<unknown>[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const [replica, first, second] of [
        [a, one, two],
        [b, two, one],
      ] as const) {
        for (const owner of [first, second, first, second]) admissions.push(replica.admit(query(owner.api_key, now, { maxRequests: BIG })));
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    const settled = await Promise.allSettled(admissions);
    expect(settled.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    // each workspace was counted rounds × 4 times: the next request is one more
    for (const owner of [one, two]) {
      expect(await a.admit(query(owner.api_key, now, { maxRequests: BIG }))).toMatchObject({ requests: { remaining: BIG - rounds * 4 - 1 } });
    }
  });

  it('refuses a record charge over the budget whole, charging nothing', async () => {
    const { workspace_id: ws, api_key: key } = await a.identity.provision({}, Date.now());
    expect(await a.budget.chargeRecords(ws, 8, 10, 0)).toMatchObject({ exceeded: false, remaining: 2 });
    expect(await b.admit(query(key, 1, { records: 3, maxRecords: 10 }))).toMatchObject({ records: { exceeded: true, remaining: 2 } });
    expect(await b.budget.chargeRecords(ws, 3, 10, 2)).toMatchObject({ exceeded: true, remaining: 2 });
    expect(await a.admit(query(key, 3, { records: 2, maxRecords: 10 }))).toMatchObject({ records: { exceeded: false, remaining: 0 } });
  });
});
