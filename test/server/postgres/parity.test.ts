/**
 * The PostgreSQL backend answers every read exactly as the SQLite backend does after the same
 * writes: lists and their pages and totals, exports, single records, attestations, systems,
 * coverage, idempotency outcomes, and the transparency log (leaf entries, checkpoints signed with
 * the same key, proofs and tiles) byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SigningKey } from '../../../src/core/index.js';
import { openStore } from '../../../src/server/store/open-store.js';
import type { Store } from '../../../src/server/store/store.js';
import type { PostgresStore } from '../../../src/server/store/postgres/index.js';
import type { AttestationRow, EvidenceRow } from '../../../src/server/store/rows.js';
import { evidenceWrite, openTestStore, withClient } from '../../helpers/postgres.js';

const key = SigningKey.fromHex('5a'.repeat(32));
let sqlite: Store;
let pgStore: PostgresStore;
let ws: string;
const ids: string[] = [];
const outcomes: { sqlite: unknown[]; pg: unknown[] } = { sqlite: [], pg: [] };

function attestationRow(n: number, signature: Buffer | null): AttestationRow {
  const executedMs = Date.UTC(2026, 0, 2) + (n % 4) * 1000;
  return {
    attestation_id: `att_test-${String(n).padStart(4, '0')}`,
    workspace_id: ws,
    system_name: `system-${n % 2}`,
    agent_name: 'agent',
    tool_name: n % 3 === 0 ? 'search' : 'write',
    input_hash: 'a'.repeat(64),
    output_hash: 'b'.repeat(64),
    executed_at: new Date(executedMs).toISOString(),
    executed_ms: executedMs,
    record: `{"agent_name":"agent","n":${n},"number":1.50}`,
    witness_form: signature === null ? null : 'canonical',
    witness_sig: signature,
    signed_ms: signature === null ? null : executedMs,
    key_fingerprint: signature === null ? null : 'f'.repeat(64),
    trust_tier: signature === null ? 'declared' : 'witnessed',
    tier_reason: null,
    source: 'test',
    received_at: new Date(executedMs + 10).toISOString(),
    received_ms: executedMs + 10,
  };
}

beforeAll(async () => {
  sqlite = await openStore(':memory:', { ledger: { key } });
  ({ workspace_id: ws } = await sqlite.identity.provision({ orgName: 'o', workspaceName: 'w' }, Date.UTC(2026, 0, 1)));
  const opened = await openTestStore('parity', { ledger: { key } });
  pgStore = opened.store;
  // the same workspace in both, so that entries and origins are the same
  await withClient(opened.url, async (client) => {
    await client.query("INSERT INTO orgs VALUES ('org_p', 'o', 0)");
    await client.query("INSERT INTO workspaces VALUES ($1, 'org_p', 'w', 0)", [ws]);
    await client.query('WITH k AS (INSERT INTO workspace_keys (workspace_id) VALUES ($1) RETURNING ws_key) INSERT INTO ledger_heads SELECT ws_key, 0 FROM k', [
      ws,
    ]);
  });
  const both = async (name: string, fn: (store: Store) => Promise<unknown>) => {
    outcomes.sqlite.push([name, await fn(sqlite)]);
    outcomes.pg.push([name, await fn(pgStore)]);
  };
  // Records with equal times (ties go to the order stored), several systems and types, a risk
  // assessment, a payload whose text must stay as sent, idempotency replays and conflicts.
  for (let n = 0; n < 40; n++) {
    const occurredMs = Date.UTC(2026, 0, 1) + Math.floor(n / 3) * 1000;
    const overrides: Partial<EvidenceRow> = {
      record_id: `rec_p-${String(n).padStart(4, '0')}`,
      occurred_ms: occurredMs,
      occurred_at: new Date(occurredMs).toISOString(),
      record_type: n % 5 === 0 ? 'ai_risk_assessment' : n % 2 === 0 ? 'change_event' : 'ai_model_inventory',
      payload: n === 7 ? '{"a":1.10,"b":"é\\u0000"}' : `{"n":${n}}`,
      client_sig: n % 4 === 0 ? 'c2ln' : null,
      client_sig_algo: n % 4 === 0 ? 'ed25519' : null,
      identity: n % 6 === 0 ? 'svc' : null,
    };
    ids.push(overrides.record_id!);
    const write = evidenceWrite(ws, n, overrides, {
      controls: n % 2 === 0 ? ['EU-AI-ACT-ART-12', 'ISO-42001-9.1'] : ['NIST-AI-RMF-MEASURE-2.7'],
      ...(n % 5 === 0 ? { riskTier: n % 10 === 0 ? 'high' : 'limited' } : {}),
      ...(n % 8 === 0 ? { claim: { key: `k-${n}`, hash: 'h1' } } : {}),
    });
    await both(`evidence ${n}`, (store) => store.recordEvidence(write));
  }
  await both('replay', (store) => store.recordEvidence(evidenceWrite(ws, 99, { record_id: 'rec_p-replay' }, { claim: { key: 'k-8', hash: 'h1' } })));
  await both('conflict', (store) => store.recordEvidence(evidenceWrite(ws, 98, { record_id: 'rec_p-conflict' }, { claim: { key: 'k-8', hash: 'h2' } })));
  await both('batch', (store) =>
    store.recordEvidenceBatch([
      evidenceWrite(ws, 50, { record_id: 'rec_p-b1' }, { claim: { key: 'kb', hash: 'x' } }),
      evidenceWrite(ws, 51, { record_id: 'rec_p-b2' }, { claim: { key: 'kb', hash: 'x' } }),
      evidenceWrite(ws, 52, { record_id: 'rec_p-b3' }, { claim: { key: 'kb', hash: 'y' } }),
    ]),
  );
  const sig = (byte: number) => Buffer.alloc(64, byte);
  await both('attestations', (store) =>
    store.recordAttestations(
      [attestationRow(0, null), attestationRow(1, sig(1)), attestationRow(2, sig(1)), attestationRow(3, sig(3)), attestationRow(4, null)],
      [undefined, undefined, undefined, { key: 'ka', hash: 'z' }, { key: 'ka', hash: 'z' }],
    ),
  );
  await both('attestation replay', (store) => store.recordAttestations([attestationRow(5, sig(3))]));
  for (let n = 6; n < 12; n++) await both(`attestation ${n}`, (store) => store.recordAttestations([attestationRow(n, n % 2 ? sig(n) : null)]));
  await sqlite.ledger.integrate();
  await pgStore.ledger.integrate();
});

afterAll(async () => {
  await sqlite?.close();
  await pgStore?.close();
});

/** Every page of a list, following `next` as the route does. */
async function allPages(store: Store, query: { systemName?: string; recordType?: string; sinceMs: number }, limit: number) {
  const pages: unknown[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.evidence.list({ workspaceId: ws, ...query, limit, ...(after !== undefined ? { afterRecordId: after } : {}) });
    pages.push(page);
    if (page === null || page.next === null) return pages;
    after = page.next.recordId;
  }
}

describe('PostgreSQL and SQLite after the same writes', () => {
  it('answered every write alike: leaf indexes, replays, conflicts, signature replays', () => {
    expect(outcomes.pg).toEqual(outcomes.sqlite);
    expect(JSON.stringify(outcomes.sqlite)).toContain('"conflict"');
    expect(JSON.stringify(outcomes.sqlite)).toContain('"replay"');
  });

  it('list every page alike, with every filter, and count alike', async () => {
    const since = Date.UTC(2026, 0, 1) + 4000;
    for (const query of [
      { sinceMs: 0 },
      { sinceMs: since },
      { sinceMs: 0, systemName: 'system-1' },
      { sinceMs: 0, recordType: 'change_event' },
      { sinceMs: 0, systemName: 'system-2', recordType: 'ai_risk_assessment' },
    ]) {
      expect(await allPages(pgStore, query, 7)).toEqual(await allPages(sqlite, query, 7));
      expect(await pgStore.evidence.count({ workspaceId: ws, ...query })).toBe(await sqlite.evidence.count({ workspaceId: ws, ...query }));
    }
    expect(await pgStore.evidence.list({ workspaceId: ws, sinceMs: 0, limit: 5, afterRecordId: 'rec_nope' })).toBeNull();
  });

  it('export alike, page after page, and return each record as stored', async () => {
    for (const filter of [
      {},
      { systemName: 'system-0' },
      { recordType: 'ai_risk_assessment', sinceMs: Date.UTC(2026, 0, 1) + 3000, untilMs: Date.UTC(2026, 0, 1) + 9000 },
    ]) {
      const read = async (store: Store) => {
        const rows: unknown[] = [];
        let afterSeq = 0;
        for (;;) {
          const page = await store.evidence.exportPage({ workspaceId: ws, ...filter, afterSeq, limit: 6 });
          if (page.length === 0) return rows;
          // ws_key: a column SQLite's SELECT * carries beside the row's members
          rows.push(
            ...page.map((stored) => {
              const { seq: _seq, ws_key: _key, ...row } = stored as unknown as Record<string, unknown>;
              return row;
            }),
          );
          afterSeq = page[page.length - 1].seq;
        }
      };
      expect(await read(pgStore)).toEqual(await read(sqlite));
    }
    const get = async (store: Store, id: string) => {
      const { ws_key: _key, seq: _seq, ...row } = (await store.evidence.get(ws, id)) as EvidenceRow & { ws_key?: number; seq?: number };
      return row;
    };
    for (const id of ids) expect(await get(pgStore, id)).toEqual(await get(sqlite, id));
    expect((await pgStore.evidence.get(ws, 'rec_p-0007'))!.payload).toBe('{"a":1.10,"b":"é\\u0000"}');
  });

  it('list attestations, systems and coverage alike', async () => {
    const attestations = async (store: Store, query: { systemName?: string; toolName?: string }) => {
      const pages: unknown[] = [];
      let afterId: string | undefined;
      for (;;) {
        const page = await store.attestations.list({
          workspaceId: ws,
          sinceMs: 0,
          untilMs: Date.UTC(2027, 0, 1),
          limit: 3,
          ...query,
          ...(afterId ? { afterId } : {}),
        });
        const rows = page!.slice(0, 3).map(({ seq: _seq, ...row }) => row);
        pages.push(rows);
        if (page!.length <= 3) return pages;
        afterId = rows[rows.length - 1].attestation_id;
      }
    };
    for (const query of [{}, { systemName: 'system-1' }, { toolName: 'search' }])
      expect(await attestations(pgStore, query)).toEqual(await attestations(sqlite, query));
    const { seq: _a, ...pgOne } = (await pgStore.attestations.get(ws, 'att_test-0003'))!;
    const { seq: _b, ...sqliteOne } = (await sqlite.attestations.get(ws, 'att_test-0003'))!;
    expect(pgOne).toEqual(sqliteOne);
    const systems = async (store: Store, contains?: string) =>
      (await store.systems.list(ws, contains)).map(({ system_id: _id, ...row }) => ({ ...row, record_count: Number(row.record_count) }));
    expect(await systems(pgStore)).toEqual(await systems(sqlite));
    expect(await systems(pgStore, 'STEM-1')).toEqual(await systems(sqlite, 'STEM-1'));
    expect(await pgStore.systems.countUnattestedSince(ws, Date.UTC(2026, 0, 2) + 2000)).toBe(
      await sqlite.systems.countUnattestedSince(ws, Date.UTC(2026, 0, 2) + 2000),
    );
    expect(await pgStore.lastEarned(ws)).toEqual(await sqlite.lastEarned(ws));
  });

  it('keep the same transparency log: checkpoint, proofs and tiles byte for byte', async () => {
    const size = await sqlite.ledger.size(ws);
    expect(size).toBeGreaterThan(45);
    expect(await pgStore.ledger.size(ws)).toBe(size);
    expect(await pgStore.ledger.checkpoint(ws)).toBe(await sqlite.ledger.checkpoint(ws));
    for (const id of [...ids.slice(0, 5), 'att_test-0003', 'rec_p-b1']) {
      expect(await pgStore.ledger.inclusion(ws, id)).toEqual(await sqlite.ledger.inclusion(ws, id));
      expect(await pgStore.ledger.inclusion(ws, id, size - 1)).toEqual(await sqlite.ledger.inclusion(ws, id, size - 1));
    }
    for (const [from, to] of [
      [0, size],
      [1, size],
      [7, size - 3],
      [size, size],
    ] as const) {
      expect(await pgStore.ledger.consistency(ws, from, to)).toEqual(await sqlite.ledger.consistency(ws, from, to));
    }
    for (const tile of [
      { level: 0, index: 0, width: size },
      { level: 'entries', index: 0, width: size },
      { level: 0, index: 0, width: 10 },
    ] as const) {
      expect(await pgStore.ledger.tile(ws, tile)).toEqual(await sqlite.ledger.tile(ws, tile));
    }
    expect(await pgStore.ledger.tile(ws, { level: 0, index: 0, width: size + 1 })).toBeNull();
    expect(await pgStore.ledger.verifierKey(ws)).toBe(await sqlite.ledger.verifierKey(ws));
  });
});
