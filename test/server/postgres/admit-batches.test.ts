/**
 * What only PostgreSQL shows of requests admitted in batches (postgres/budget.ts): a burst of
 * concurrent admits at one replica is one statement, so one transaction writes every workspace
 * row it counts, and a statement that fails fails every request of its batch with the store's
 * error (the database unavailable: 503). The answers themselves (exactly those of one request
 * after the other) are proven on both backends in test/server/store-admit.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../../../src/server/store/errors.js';
import { PgBudgetStore } from '../../../src/server/store/postgres/budget.js';
import type { PostgresStore } from '../../../src/server/store/postgres/index.js';
import { createPool } from '../../../src/server/store/postgres/pool.js';
import type { AdmitQuery } from '../../../src/server/store/store.js';
import { openTestStore, withClient } from '../../helpers/postgres.js';
import { closedPort } from '../../helpers/ports.js';

let store: PostgresStore;
let replica: PostgresStore;
let url: string;

beforeAll(async () => {
  ({ store, url } = await openTestStore('admit batches'));
  ({ store: replica } = await openTestStore('admit batches', {}, url));
});
afterAll(async () => {
  await store?.close();
  await replica?.close();
});

function query(apiKey: string, at: number): AdmitQuery {
  return { apiKey, nowMs: at, budgetNowMs: at, maxRequests: 100, records: 1, maxRecords: 100 };
}

describe('requests admitted in batches on PostgreSQL', () => {
  it('counts a burst of concurrent requests over three workspaces in one transaction', async () => {
    const now = Date.now();
    const workspaces = [await store.identity.provision({}, now), await store.identity.provision({}, now), await store.identity.provision({}, now)];
    const admissions = await Promise.all(Array.from({ length: 30 }, (_, i) => store.admit(query(workspaces[i % 3]!.api_key, now))));
    expect(admissions.every((admission) => admission.auth !== null && admission.counted)).toBe(true);
    const rows = await withClient(url, async (client) =>
      (await client.query<{ requests: number; writer: string }>(
        'SELECT requests::int, xmin::text AS writer FROM budget_windows WHERE workspace_id = ANY ($1) ORDER BY workspace_id',
        [workspaces.map((w) => w.workspace_id)],
      )).rows,
    );
    expect(rows.map((row) => row.requests)).toEqual([10, 10, 10]);
    // the last write to each row is the same transaction's: the burst's one statement
    expect(new Set(rows.map((row) => row.writer)).size).toBe(1);
  });

  it('counts every request of two replicas\' bursts over the same workspaces, taken in opposite orders, once', async () => {
    const now = Date.now();
    const workspaces = await Promise.all(Array.from({ length: 4 }, () => store.identity.provision({}, now)));
    const keys = workspaces.map((w) => w.api_key);
    const reversed = [...keys].reverse();
    for (let round = 0; round < 5; round++) {
      const admissions = await Promise.all([
        ...Array.from({ length: 24 }, (_, i) => store.admit(query(keys[i % 4]!, now))),
        ...Array.from({ length: 24 }, (_, i) => replica.admit(query(reversed[i % 4]!, now))),
      ]);
      expect(admissions.every((admission) => admission.auth !== null && admission.counted)).toBe(true);
    }
    const rows = await withClient(url, async (client) =>
      (await client.query<{ requests: number }>('SELECT requests::int FROM budget_windows WHERE workspace_id = ANY ($1)', [workspaces.map((w) => w.workspace_id)])).rows,
    );
    expect(rows.map((row) => row.requests)).toEqual([60, 60, 60, 60]);
  });

  it('refuses every request of a batch with the statement\'s one error when the database is unreachable, and tries the next batch again', async () => {
    const pool = createPool(`postgres://govctl@127.0.0.1:${await closedPort()}/govctl`);
    const budget = new PgBudgetStore(pool);
    try {
      const burst = async () => {
        const outcomes = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => budget.admit(query(`gk_unreachable${i}`, 1_000 + i))));
        return outcomes.map((outcome) => (outcome.status === 'rejected' ? outcome.reason : outcome.value));
      };
      const first = await burst();
      for (const error of first) expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect(new Set(first).size).toBe(1);
      const second = await burst();
      for (const error of second) expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect(new Set(second).size).toBe(1);
      expect(second[0]).not.toBe(first[0]);
    } finally {
      await pool.end();
    }
  });
});
