/**
 * PostgreSQL killed during writes: every write the store acknowledged is there after the
 * database restarts (synchronous_commit on, fsync on), the log has no gap and integrates and
 * proves as before, and the same store carries on writing once the database is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SigningKey } from '../../../src/core/index.js';
import { DatabaseUnavailableError } from '../../../src/server/store/errors.js';
import { openPostgresStore, type PostgresStore } from '../../../src/server/store/postgres/index.js';
import { evidenceWrite, startCluster, withClient, type PostgresCluster } from '../../helpers/postgres.js';

let cluster: PostgresCluster;
let url: string;
let store: PostgresStore;

beforeAll(async () => {
  cluster = await startCluster();
  url = await cluster.createDatabase('crash');
  store = await openPostgresStore(url, { ledger: { key: SigningKey.fromHex('7c'.repeat(32)) } });
});
afterAll(async () => {
  await store?.close().catch(() => {});
  await cluster?.stop();
});

describe('PostgreSQL killed during writes', () => {
  it('loses no acknowledged record and leaves the log without a gap', async () => {
    const { workspace_id: ws } = await store.identity.provision({}, Date.now());
    const acknowledged: string[] = [];
    const failures: unknown[] = [];
    let failed = 0;
    let stop = false;
    let enough = () => {};
    const twoHundredAcknowledged = new Promise<void>((resolve) => (enough = resolve));
    // four writers, each a write after the other, until the database dies under them
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let n = 0; !stop; n++) {
        const write = evidenceWrite(ws, w * 100_000 + n);
        try {
          await store.recordEvidence(write);
          acknowledged.push(write.row.record_id);
          if (acknowledged.length === 200) enough();
        } catch (error) {
          failed += 1;
          failures.push(error);
          return;
        }
      }
    });
    await twoHundredAcknowledged;
    await cluster.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    expect(failed).toBeGreaterThan(0); // the kill landed during writes
    // refused as the database being away (503), never as a bug of the request
    for (const failure of failures) expect(failure).toBeInstanceOf(DatabaseUnavailableError);
    await cluster.start();

    const stored = await withClient(
      url,
      async (client) =>
        new Set((await client.query('SELECT record_id FROM evidence WHERE workspace_id = $1', [ws])).rows.map((row) => row.record_id as string)),
    );
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    const log = await withClient(
      url,
      async (client) =>
        (
          await client.query(
            'SELECT count(*)::int AS n, coalesce(max(leaf_index), -1)::int AS top FROM ledger_leaves l JOIN workspace_keys k USING (ws_key) WHERE k.workspace_id = $1',
            [ws],
          )
        ).rows[0],
    );
    expect(log).toEqual({ n: stored.size, top: stored.size - 1 });

    // the same store, its broken connections replaced, writes and integrates again
    const after = evidenceWrite(ws, 999_999);
    let outcome;
    for (let attempt = 0; ; attempt++) {
      try {
        outcome = await store.recordEvidence(after);
        break;
      } catch (error) {
        if (attempt > 20) throw error; // idle connections the pool still held fail once each
      }
    }
    expect(outcome.leafIndex).toBe(stored.size);
    expect(await store.ledger.integrate()).toBe(stored.size + 1);
    const proof = await store.ledger.inclusion(ws, acknowledged[0]);
    expect(proof).toMatchObject({ tree_size: stored.size + 1 });
  });
});
