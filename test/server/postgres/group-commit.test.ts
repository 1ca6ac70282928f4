/**
 * The PostgreSQL write path: a replica commits concurrent writes in one transaction; a failing
 * write is rejected alone; two replicas writing one workspace at once get dense leaf indexes in
 * commit order (an export continued after a seq misses nothing); an idempotency key used at two
 * replicas at once stores one record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnstorableValueError } from '../../../src/server/store/errors.js';
import type { PostgresStore } from '../../../src/server/store/postgres/index.js';
import type { AttestationRow } from '../../../src/server/store/rows.js';
import { evidenceWrite, openTestStore, withClient } from '../../helpers/postgres.js';
import { storedAttestationRow } from '../../helpers/service-requests.js';

let a: PostgresStore;
let b: PostgresStore;
let url: string;

beforeAll(async () => {
  ({ store: a, url } = await openTestStore('group commit'));
  ({ store: b } = await openTestStore('group commit', {}, url));
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

/** How many transactions stored the workspace's evidence rows (each row's xmin is its inserting transaction). */
async function transactionsOf(recordIds: readonly string[]): Promise<number> {
  return withClient(
    url,
    async (client) => (await client.query('SELECT count(DISTINCT xmin::text)::int AS n FROM evidence WHERE record_id = ANY($1)', [recordIds])).rows[0].n,
  );
}

describe('group commit on PostgreSQL', () => {
  it('commits the writes that arrive together in one transaction', async () => {
    const { workspace_id: ws } = await a.identity.provision({}, Date.now());
    await a.recordEvidence(evidenceWrite(ws, 0)); // the workspace's key is known from here on
    const writes = Array.from({ length: 50 }, (_, i) => evidenceWrite(ws, i + 1));
    const outcomes = await Promise.all(writes.map((write) => a.recordEvidence(write)));
    expect(outcomes.map((outcome) => outcome.leafIndex).sort((x, y) => x! - y!)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(await transactionsOf(writes.map((write) => write.row.record_id))).toBe(1);
  });

  it('stores the attestations of concurrent writes in one transaction, a signature sent twice once', async () => {
    const { workspace_id: ws } = await a.identity.provision({}, Date.now());
    await a.recordEvidence(evidenceWrite(ws, 0)); // the workspace's key is known from here on
    const row = (n: number, sig: number | null): AttestationRow =>
      storedAttestationRow({
        attestation_id: `att_g-${n}`,
        workspace_id: ws,
        system_name: 'bot',
        agent_name: 'bot',
        tool_name: 'search',
        executed_ms: Date.UTC(2026, 1, 1),
        record: `{"n":${n}}`,
        witness_form: sig === null ? null : 'canonical',
        witness_sig: sig === null ? null : Buffer.alloc(64, sig),
        signed_ms: sig === null ? null : Date.UTC(2026, 1, 1),
        trust_tier: sig === null ? 'declared' : 'witnessed',
        source: 'test',
      });
    const outcomes = await Promise.all([a.recordAttestations([row(1, 7)]), a.recordAttestations([row(2, null), row(3, 8)]), a.recordAttestations([row(4, 7)])]);
    expect(outcomes.map((batch) => batch.map((o) => (o === null ? null : o.leafIndex)))).toEqual([[1], [2, 3], [null]]);
    const xmins = await withClient(
      url,
      async (client) =>
        (await client.query('SELECT count(DISTINCT xmin::text)::int AS n, count(*)::int AS rows FROM attestations WHERE workspace_id = $1', [ws])).rows[0],
    );
    expect(xmins).toEqual({ n: 1, rows: 3 });
  });

  it('rejects a failing write alone: the rest of its group is stored, and no leaf index is lost', async () => {
    const { workspace_id: ws } = await a.identity.provision({}, Date.now());
    const first = evidenceWrite(ws, 0);
    await a.recordEvidence(first);
    // the same record_id again: the unique index refuses it inside the group's transaction
    const results = await Promise.allSettled([a.recordEvidence(evidenceWrite(ws, 1)), a.recordEvidence({ ...first }), a.recordEvidence(evidenceWrite(ws, 2))]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/duplicate key|unique/);
    expect(
      results
        .filter((r) => r.status === 'fulfilled')
        .map((r) => (r as PromiseFulfilledResult<{ leafIndex: number }>).value.leafIndex)
        .sort(),
    ).toEqual([1, 2]);
    const leaves = await withClient(
      url,
      async (client) =>
        (
          await client.query(
            'SELECT count(*)::int AS n, max(leaf_index)::int AS top FROM ledger_leaves l JOIN workspace_keys k USING (ws_key) WHERE k.workspace_id = $1',
            [ws],
          )
        ).rows[0],
    );
    expect(leaves).toEqual({ n: 3, top: 2 });
    expect(await a.evidence.count({ workspaceId: ws, sinceMs: 0 })).toBe(3);
  });

  it('refuses a text PostgreSQL cannot hold (U+0000) as unstorable, alone in its group, and finds nothing by it', async () => {
    const { workspace_id: ws } = await a.identity.provision({}, Date.now());
    const results = await Promise.allSettled([
      a.recordEvidence(evidenceWrite(ws, 1)),
      a.recordEvidence(evidenceWrite(ws, 2, { system_name: 'a\u0000b' })),
      a.recordEvidence(evidenceWrite(ws, 3)),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(UnstorableValueError);
    expect(await a.evidence.count({ workspaceId: ws, sinceMs: 0 })).toBe(2);
    expect(await a.evidence.get(ws, 'rec_\u0000')).toBeUndefined();
    expect(await a.systems.list(ws, '\u0000')).toEqual([]);
    expect(await a.evidence.list({ workspaceId: ws, sinceMs: 0, limit: 5, afterRecordId: '\u0000' })).toBeNull();
  });

  it('rejects a write to a workspace that was never provisioned', async () => {
    await expect(a.recordEvidence(evidenceWrite('ws_nope', 0))).rejects.toThrow(/not provisioned/);
  });

  it('gives two replicas writing one workspace dense leaf indexes, stored in commit order', async () => {
    const { workspace_id: ws } = await a.identity.provision({}, Date.now());
    const writes = Array.from({ length: 120 }, (_, i) => (i % 2 === 0 ? a : b).recordEvidence(evidenceWrite(ws, i)));
    const outcomes = await Promise.all(writes);
    expect(outcomes.map((o) => o.leafIndex).sort((x, y) => x! - y!)).toEqual(Array.from({ length: 120 }, (_, i) => i));
    // in the order stored (seq), the leaf indexes ascend: an export continued after a seq never
    // skips a record that another replica committed later
    const ordered = await withClient(url, async (client) =>
      (
        await client.query(
          'SELECT l.leaf_index::int AS i FROM evidence e JOIN ledger_leaves l ON l.ws_key = e.ws_key AND l.record_id = e.record_id WHERE e.workspace_id = $1 ORDER BY e.seq',
          [ws],
        )
      ).rows.map((row) => row.i),
    );
    expect(ordered).toEqual(Array.from({ length: 120 }, (_, i) => i));
  });

  it('lists records of the same time by record_id descending whichever replica stored them first, page after page', async () => {
    const { workspace_id: ws } = await a.identity.provision({}, Date.now());
    // ids handed out by two replicas need not follow the order stored: here the later id is stored first
    const ids = ['rec_0000-b', 'rec_0000-c', 'rec_0000-a'];
    for (const [i, id] of ids.entries()) await (i % 2 ? b : a).recordEvidence(evidenceWrite(ws, 5, { record_id: id }));
    const pages: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = (await b.evidence.list({ workspaceId: ws, sinceMs: 0, limit: 1, ...(after ? { afterRecordId: after } : {}) }))!;
      pages.push(...page.records.map((record) => record.record_id));
      if (page.next === null) break;
      after = page.next.recordId;
    }
    expect(pages).toEqual(['rec_0000-c', 'rec_0000-b', 'rec_0000-a']);
  });

  it('stores one record for an idempotency key sent to two replicas at once, and replays it at both', async () => {
    const { workspace_id: ws } = await a.identity.provision({}, Date.now());
    const claim = { key: 'same-key', hash: 'h' };
    const outcomes = await Promise.all([a.recordEvidence(evidenceWrite(ws, 1, {}, { claim })), b.recordEvidence(evidenceWrite(ws, 2, {}, { claim }))]);
    const stored = outcomes.filter((o) => o.hit === null);
    const replayed = outcomes.filter((o) => o.hit !== null);
    expect(stored).toHaveLength(1);
    expect(replayed).toEqual([{ hit: { kind: 'replay', result: expect.objectContaining({ ledger_index: stored[0].leafIndex }) } }]);
    expect(await a.evidence.count({ workspaceId: ws, sinceMs: 0 })).toBe(1);
    const at = evidenceWrite(ws, 2).row.received_ms;
    expect(await b.findIdempotent(ws, { key: 'same-key', hash: 'other' }, at)).toEqual({ kind: 'conflict' });
    expect(await a.findIdempotent(ws, claim, at)).toMatchObject({ kind: 'replay' });
  });

  it('acknowledges a write only once it is committed: another connection sees it', async () => {
    const { workspace_id: ws } = await a.identity.provision({}, Date.now());
    const write = evidenceWrite(ws, 3);
    await a.recordEvidence(write);
    const seen = await withClient(url, async (client) => (await client.query('SELECT payload FROM evidence WHERE record_id = $1', [write.row.record_id])).rows);
    expect(seen).toEqual([{ payload: write.row.payload }]);
  });
});
