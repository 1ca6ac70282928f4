/**
 * The evidence list tables, written in batches: a list merges the batched entries
 * with the records stored after them, so it must give exactly what one index would, with every
 * filter, on either side of a batch, across pages, after a restart and for a second workspace.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteOnly } from '../helpers/backend.js';
import { uuidv7 } from '../../src/server/ids.js';
import { prng } from '../helpers/prng.js';
import { openSqliteStore as openStore, type SqliteStore as Store } from '../../src/server/store/sqlite/store.js';
import { storedEvidenceRow } from '../helpers/service-requests.js';

interface Stored {
  id: string;
  ws: string;
  system: string;
  type: string;
  occurredMs: number;
  order: number;
}

const SYSTEMS = ['loan-scorer', 'chat-assistant', 'fraud-model', 'rare-one'];
const TYPES = ['change_event', 'access_review'];

// SQLite-only: SQLite's evidence list tables written in batches. PostgreSQL lists
// page by page alike with SQLite: test/server/postgres/parity.test.ts.
describe.skipIf(sqliteOnly)('evidence list tables written in batches', () => {
  let dir: string;
  let path: string;
  let store: Store;
  const stored: Stored[] = [];
  let wsA: string;
  let wsB: string;
  const t0 = Date.UTC(2026, 10, 1);

  /** Every record of `ws` (and `system`, `type`) newest first, ties in the order stored. */
  function expected(ws: string, system: string | undefined, type?: string, sinceMs = 0): string[] {
    return stored
      .filter((r) => r.ws === ws && (system === undefined || r.system === system) && (type === undefined || r.type === type) && r.occurredMs >= sinceMs)
      .sort((a, b) => b.occurredMs - a.occurredMs || b.order - a.order)
      .map((r) => r.id);
  }

  /** The whole list, read page by page. */
  async function listed(s: Store, ws: string, system: string | undefined, type: string | undefined, limit: number, sinceMs = 0): Promise<string[]> {
    const ids: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 1000; pages++) {
      const page = await s.tables.evidence.list({
        workspaceId: ws,
        ...(system !== undefined ? { systemName: system } : {}),
        ...(type !== undefined ? { recordType: type } : {}),
        sinceMs,
        limit,
        ...(after !== undefined ? { afterRecordId: after } : {}),
      });
      expect(page).not.toBeNull();
      ids.push(...page!.records.map((r) => r.record_id));
      if (!page!.next) return ids;
      after = page!.next.recordId;
    }
    throw new Error('the list did not end');
  }

  function throughSeq(s: Store): number {
    return s.db.prepare("SELECT through_seq FROM index_progress WHERE name = 'evidence_lists'").pluck().get() as number;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'govctl-sysindex-'));
    path = join(dir, 'e.db');
    store = openStore(path, { listIndexBatch: 7 });
    wsA = (await store.tables.identity.provision({}, Date.now())).workspace_id;
    wsB = (await store.tables.identity.provision({}, Date.now())).workspace_id;
    const random = prng(42);
    const add = (ws: string, system: string, type: string, occurredMs: number): Promise<unknown> => {
      const id = `rec_${uuidv7()}`;
      stored.push({ id, ws, system, type, occurredMs, order: stored.length });
      return store.recordEvidence({ row: storedEvidenceRow({ workspaceId: ws, recordId: id, occurredMs, system, type }), controls: [] });
    };
    // 23 groups of 1 to 9 records: batches of 7 fall inside groups and between them. Some records
    // are back-dated below their neighbours, and times repeat, so ties need the stored order.
    for (let group = 0; group < 23; group++) {
      const size = 1 + Math.floor(random() * 9);
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < size; i++) {
        const ws = random() < 0.8 ? wsA : wsB;
        const system = SYSTEMS[Math.floor(random() * (random() < 0.1 ? 4 : 3))];
        const type = TYPES[Math.floor(random() * 2)];
        writes.push(add(ws, system, type, t0 + Math.floor(random() * 40) * 60_000));
      }
      await Promise.all(writes);
    }
    // End with records after the last batch, so that lists merge both halves.
    while (stored.length === throughSeq(store)) await add(wsA, 'loan-scorer', 'change_event', t0 + 30 * 60_000);
  });

  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes entries a batch at a time and keeps the rest as a tail', () => {
    const last = stored.length;
    const through = throughSeq(store);
    expect(through).toBeGreaterThan(0);
    expect(last - through).toBeLessThan(7 + 9); // caught up at the end of the group that reached a batch
    for (const table of ['evidence_by_time', 'evidence_by_system', 'evidence_by_type']) {
      expect(store.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get(), table).toBe(through);
    }
    // the tail is not empty, or this test would not see both halves of the merge
    expect(last).toBeGreaterThan(through);
  });

  it('lists exactly as one index would, with every filter, across the batch boundary and pages', async () => {
    for (const ws of [wsA, wsB]) {
      for (const system of [undefined, ...SYSTEMS]) {
        for (const type of [undefined, ...TYPES]) {
          for (const limit of [1, 3, 200]) {
            expect(await listed(store, ws, system, type, limit), `${ws} ${system} ${type} ${limit}`).toEqual(expected(ws, system, type));
          }
        }
        const since = t0 + 20 * 60_000;
        expect(await listed(store, ws, system, undefined, 4, since)).toEqual(expected(ws, system, undefined, since));
      }
    }
    expect(expected(wsA, 'loan-scorer').length).toBeGreaterThan(10);
  });

  it('gives the same lists after a restart with the default batch size', async () => {
    await store.close();
    store = openStore(path);
    const through = throughSeq(store);
    expect(through).toBeLessThan(stored.length); // nothing is written by opening
    for (const system of [undefined, ...SYSTEMS]) expect(await listed(store, wsA, system, undefined, 5)).toEqual(expected(wsA, system));
    expect(await listed(store, wsB, undefined, 'access_review', 2)).toEqual(expected(wsB, undefined, 'access_review'));
  });
});
