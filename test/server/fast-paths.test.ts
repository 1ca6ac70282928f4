/**
 * The lighter request path (issue 3): the fused auth and rate-limit hook with its own fixed-window
 * counter, systems written once per group commit, and the evidence lists' query plans.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FixedWindowLimiter } from '../../src/server/store/memory-budget.js';
import { createApp, provision, type ServiceApp } from '../../src/server/index.js';
import { listStatements } from '../../src/server/store/sqlite/evidence.js';
import type { EvidenceRow } from '../../src/server/store/rows.js';
import { openSqliteStore } from '../../src/server/store/sqlite/store.js';
import { openStore } from '../../src/server/store/open-store.js';
import type { Store } from '../../src/server/store/store.js';
import { sqliteOnly, testStoreLocation } from '../helpers/backend.js';
import { storedEvidenceRow } from '../helpers/service-requests.js';

describe('FixedWindowLimiter', () => {
  it('counts per key in a window that starts with the first request, and starts again after it', () => {
    const limiter = new FixedWindowLimiter(60_000);
    const t = 1_000_000;
    expect(limiter.hit('a', 3, t)).toEqual({ exceeded: false, remaining: 2, resetSeconds: 60 });
    expect(limiter.hit('a', 3, t + 1500)).toEqual({ exceeded: false, remaining: 1, resetSeconds: 59 });
    expect(limiter.hit('b', 3, t + 1500)).toEqual({ exceeded: false, remaining: 2, resetSeconds: 60 });
    expect(limiter.hit('a', 3, t + 2000)).toEqual({ exceeded: false, remaining: 0, resetSeconds: 58 });
    expect(limiter.hit('a', 3, t + 59_001)).toEqual({ exceeded: true, remaining: 0, resetSeconds: 1 });
    // the window ends 60 s after its first request
    expect(limiter.hit('a', 3, t + 60_000)).toEqual({ exceeded: false, remaining: 2, resetSeconds: 60 });
  });
});

describe('rate-limit headers from the fused hook', () => {
  let dir: string;
  let service: ServiceApp;
  let apiKey: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'govctl-fast-'));
    const db = await testStoreLocation('fast-paths', dir);
    apiKey = (await provision(db, {})).api_key;
    service = await createApp({ db, rateLimitPerMinute: 3 });
  });
  afterAll(async () => {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends X-RateLimit-* on every counted reply and 429 with Retry-After past the budget; a bad key is not counted', async () => {
    const get = (key: string) => service.app.inject({ method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${key}` } });
    expect((await get('gk_unknown')).statusCode).toBe(401);
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const reply = await get(apiKey);
      expect(reply.statusCode).toBe(200);
      expect(reply.headers['x-ratelimit-limit']).toBe('3');
      expect(Number(reply.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(1);
      remaining.push(String(reply.headers['x-ratelimit-remaining']));
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const limited = await get(apiKey);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ error: 'rate_limited' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect(limited.headers['x-request-id']).toMatch(/^req_/);
  });
});

describe('systems written once per group', () => {
  let store: Store;
  afterEach(async () => {
    await store.close();
  });

  function row(workspaceId: string, id: string, system: string, occurredMs: number, receivedMs: number, type = 'ai_risk_assessment'): EvidenceRow {
    return storedEvidenceRow({ workspaceId, recordId: id, occurredMs, receivedMs, system, type });
  }

  it('leaves what one upsert per record would: latest assessment wins, a tie goes to the later arrival', async () => {
    store = await openStore(await testStoreLocation('systems'));
    const ws = (await store.identity.provision({}, Date.now())).workspace_id;
    const t = Date.UTC(2026, 0, 1);
    await store.recordEvidence({ row: row(ws, 'rec_0', 'a', t + 5000, t + 9000), controls: [], riskTier: 'minimal' });
    // one group: an older assessment, two tied with the first, a plain record later in time
    await Promise.all([
      store.recordEvidence({ row: row(ws, 'rec_1', 'a', t + 1000, t + 9000), controls: [], riskTier: 'unacceptable' }),
      store.recordEvidence({ row: row(ws, 'rec_2', 'a', t + 5000, t + 9000), controls: [], riskTier: 'limited' }),
      store.recordEvidence({ row: row(ws, 'rec_3', 'a', t + 5000, t + 9000), controls: [], riskTier: 'high' }),
      store.recordEvidence({ row: row(ws, 'rec_4', 'a', t + 8000, t + 9000, 'change_event'), controls: [] }),
      store.recordEvidence({ row: row(ws, 'rec_5', 'b', t + 2000, t + 9000, 'change_event'), controls: [] }),
    ]);
    const systems = (await store.systems.list(ws)).map((s) => ({ name: s.name, registered: s.registered, risk: s.risk_tier, last: s.last_evidence_ms }));
    expect(systems).toEqual([
      { name: 'a', registered: 1, risk: 'high', last: t + 8000 },
      { name: 'b', registered: 0, risk: null, last: t + 2000 },
    ]);
  });
});

// SQLite-only: SQLite's query plans for the evidence lists.
describe.skipIf(sqliteOnly)('the evidence list queries', () => {
  it('read their list table by key, newest first with no sort', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'govctl-lists-'));
    try {
      const path = join(dir, 'lists.db');
      const ws = 'ws_0195f000-0000-7000-8000-00000000000a';
      const now = Date.now();
      const store = openSqliteStore(path);
      try {
        store.db.prepare('INSERT INTO workspace_keys (workspace_id) VALUES (?)').run(ws);
        // Every shape of list query the store builds reads its list table by key,
        // newest first with no sort, and the records after through_seq by rowid range (at most
        // LIST_INDEX_BATCH of them, sorted).
        const key = store.db.prepare('SELECT ws_key FROM workspace_keys WHERE workspace_id = ?').pluck().get(ws);
        const planOf = (sql: string) =>
          (
            store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({
              key,
              sinceMs: 0,
              take: 5,
              systemName: 'sys-1',
              recordType: 'change_event',
              afterMs: now,
              afterSeq: 10,
              throughSeq: 3,
            }) as { detail: string }[]
          )
            .map((p) => p.detail)
            .join('\n');
        for (const system of [false, true]) {
          for (const type of [false, true]) {
            for (const after of [false, true]) {
              const sql = listStatements({ system, type, after });
              const main = planOf(sql.main);
              const label = JSON.stringify({ system, type, after });
              const table = system ? 'evidence_by_system' : type ? 'evidence_by_type' : 'evidence_by_time';
              expect(`${label}: ${main}`).toMatch(/: SEARCH l USING PRIMARY KEY \(ws_key=\?/);
              expect(sql.main).toContain(`FROM ${table} AS l`);
              expect(`${label}: ${main}`).not.toMatch(/TEMP B-TREE|SCAN/);
              expect(`${label}: ${planOf(sql.tail)}`).toMatch(/SEARCH e USING INTEGER PRIMARY KEY \(rowid>\?\)/);
            }
          }
        }
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
