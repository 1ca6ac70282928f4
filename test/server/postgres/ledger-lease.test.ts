/**
 * The transparency log with replicas: one replica at a time integrates and signs (a lease row),
 * another takes over once the holder's lease has expired (an injected clock) or at once when it
 * gives the lease up; a holder whose lease was taken over integrates nothing; every replica serves
 * the same checkpoints and proofs from the stored rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SigningKey } from '../../../src/core/index.js';
import type { PostgresStore } from '../../../src/server/store/postgres/index.js';
import { LogKeyMismatchError } from '../../../src/server/store/errors.js';
import { evidenceWrite, openTestStore, withClient } from '../../helpers/postgres.js';

const key = SigningKey.fromHex('6b'.repeat(32));
const clock = { ms: 1_000_000 };
const ledger = { key, nowMs: () => clock.ms, leaseMs: 3000 };
let a: PostgresStore;
let b: PostgresStore;
let c: PostgresStore;
let url: string;
let ws: string;

beforeAll(async () => {
  ({ store: a, url } = await openTestStore('ledger lease', { ledger }));
  ({ store: b } = await openTestStore('ledger lease', { ledger }, url));
  ({ store: c } = await openTestStore('ledger lease', { ledger }, url));
  ({ workspace_id: ws } = await a.identity.provision({}, Date.now()));
});
afterAll(async () => {
  for (const store of [a, b, c]) await store?.close();
});

const write = (store: PostgresStore, n: number) => store.recordEvidence(evidenceWrite(ws, n));

describe('the log with several replicas', () => {
  it('is integrated by the lease holder only, and served alike by every replica', async () => {
    await Promise.all([write(a, 0), write(b, 1), write(c, 2)]);
    expect(await a.ledger.integrate()).toBe(3);
    await write(b, 3);
    expect(await b.ledger.integrate()).toBe(0);
    expect(await c.ledger.integrate()).toBe(0);
    expect(await b.ledger.size(ws)).toBe(3);
    expect(await a.ledger.integrate()).toBe(1);
    const checkpoint = await a.ledger.checkpoint(ws);
    expect(checkpoint).toMatch(/\n4\n/);
    expect(await b.ledger.checkpoint(ws)).toBe(checkpoint);
    expect(await c.ledger.checkpoint(ws)).toBe(checkpoint);
    const id = evidenceWrite(ws, 0).row.record_id.slice(0, 'rec_test-000000'.length);
    const leaf = await withClient(
      url,
      async (client) => (await client.query("SELECT record_id FROM ledger_leaves WHERE record_id LIKE $1 || '%'", [id])).rows[0].record_id,
    );
    expect(await c.ledger.inclusion(ws, leaf)).toEqual(await a.ledger.inclusion(ws, leaf));
  });

  it('passes to another replica once the holder has stopped renewing for the lease length', async () => {
    await write(a, 10); // the holder goes quiet from here (a dead process renews nothing)
    clock.ms += 2999;
    expect(await b.ledger.integrate()).toBe(0);
    clock.ms += 1;
    expect(await b.ledger.integrate()).toBe(1);
    expect(await b.log.lease.current()).toBe(b.log.lease.holder);
    // the old holder, back, finds the lease taken and integrates nothing
    await write(c, 11);
    expect(await a.ledger.integrate()).toBe(0);
    expect(await b.ledger.integrate()).toBe(1);
    expect(await c.ledger.size(ws)).toBe(6);
  });

  it('passes at once when the holder gives it up on a clean shutdown', async () => {
    await write(c, 20);
    await b.ledger.close(); // integrates what is pending, then releases the lease
    expect(await a.ledger.size(ws)).toBe(7);
    await write(a, 21);
    expect(await c.ledger.integrate()).toBe(1);
    expect(await c.log.lease.current()).toBe(c.log.lease.holder);
  });

  it('never lets a stale holder sign: the lease is re-checked inside the integrating transaction', async () => {
    // c holds the lease; a's row check (FOR SHARE) fails for any replica but the holder
    await withClient(url, async (client) => {
      await client.query('BEGIN');
      expect(await a.log.lease.fence(client)).toBe(false);
      expect(await c.log.lease.fence(client)).toBe(true);
      await client.query('ROLLBACK');
    });
    clock.ms += 5000; // c's lease has expired: c itself is fenced off until it renews
    await withClient(url, async (client) => {
      await client.query('BEGIN');
      expect(await c.log.lease.fence(client)).toBe(false);
      await client.query('ROLLBACK');
    });
  });
});

describe('a replica given another log key', () => {
  it('is refused while a replica with the other key holds the lease, and taken once none does (a rotation)', async () => {
    const keyed = (hex: string) => ({ key: SigningKey.fromHex(hex), nowMs: () => clock.ms, leaseMs: 3000 });
    const first = await openTestStore('ledger key', { ledger: keyed('4d'.repeat(32)) });
    let firstOpen = true;
    try {
      await first.store.identity.provision({}, Date.now());
      expect(await first.store.ledger.integrate()).toBe(0); // takes the lease (nothing to integrate)
      const other = SigningKey.fromHex('5e'.repeat(32));
      const refused = await openTestStore('ledger key', { ledger: keyed('5e'.repeat(32)) }, first.url).then(
        async ({ store }) => {
          await store.close();
          return null;
        },
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(LogKeyMismatchError);
      expect((refused as Error).message).toContain(`this one's ${other.publicKeyHex.slice(0, 16)}`);
      // the same key is welcome beside it
      const same = await openTestStore('ledger key', { ledger: keyed('4d'.repeat(32)) }, first.url);
      await same.store.close();
      // every replica stopped (the lease given up): another key is a rotation, and is taken
      await first.store.close();
      firstOpen = false;
      const rotated = await openTestStore('ledger key', { ledger: keyed('5e'.repeat(32)) }, first.url);
      await rotated.store.close();
    } finally {
      if (firstOpen) await first.store.close();
    }
  });
});
