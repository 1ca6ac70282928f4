/**
 * Per-workspace budgets shared by every replica: one row per workspace holding its current fixed
 * window (start, requests, records), changed by one `INSERT … ON CONFLICT … DO UPDATE … RETURNING`
 * per request, which PostgreSQL runs under the row's lock. The rule is FixedWindowLimiter's
 * (memory-budget.ts): a window lasts RATE_LIMIT_WINDOW_MS from the first request after the last one ended.
 *
 * Precision: counts are exact across replicas (every request and every record is counted once,
 * in the order the row lock grants). Window edges are set by the clock of the replica whose request
 * opens a window, so replicas' clocks differing by d move an edge by up to d.
 */
import type pg from 'pg';
import { RATE_LIMIT_WINDOW_MS } from '../memory-budget.js';
import type { BudgetState, BudgetStore } from '../store.js';

/** `w` is the row before this statement (the alias), $2 now, $3 the window length. */
const ENDED = 'w.start_ms + $3::bigint <= $2::bigint';

/**
 * Each count is its own statement and commits without waiting for the WAL flush
 * (`synchronous_commit = off` for its transaction alone, set inside the statement): a request
 * must not wait for an fsync to be counted, and a crash of PostgreSQL forgets at most the last
 * fraction of a second of counts (wal_writer_delay), which only ever lets a few more requests in.
 */
const NO_FLUSH = "(SELECT set_config('synchronous_commit', 'off', true)) AS no_flush";

const HIT = `
  INSERT INTO budget_windows AS w (workspace_id, start_ms, requests, records) SELECT $1, $2::bigint, 1, 0 FROM ${NO_FLUSH}
  ON CONFLICT (workspace_id) DO UPDATE SET
    start_ms = CASE WHEN ${ENDED} THEN $2 ELSE w.start_ms END,
    requests = CASE WHEN ${ENDED} THEN 1 ELSE w.requests + 1 END,
    records  = CASE WHEN ${ENDED} THEN 0 ELSE w.records END
  RETURNING start_ms, requests`;

/** $4 the records charged, $5 the most a window may hold: a charge over it is refused whole. */
const CHARGE = `
  INSERT INTO budget_windows AS w (workspace_id, start_ms, requests, records, last_ok)
    SELECT $1, $2::bigint, 0, CASE WHEN $4::bigint <= $5::bigint THEN $4 ELSE 0 END, $4 <= $5 FROM ${NO_FLUSH}
  ON CONFLICT (workspace_id) DO UPDATE SET
    start_ms = CASE WHEN ${ENDED} THEN $2 ELSE w.start_ms END,
    requests = CASE WHEN ${ENDED} THEN 0 ELSE w.requests END,
    records  = (CASE WHEN ${ENDED} THEN 0 ELSE w.records END)
               + (CASE WHEN (CASE WHEN ${ENDED} THEN 0 ELSE w.records END) + $4 <= $5 THEN $4 ELSE 0 END),
    last_ok  = (CASE WHEN ${ENDED} THEN 0 ELSE w.records END) + $4 <= $5
  RETURNING start_ms, records, last_ok`;

export class PgBudgetStore implements BudgetStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly windowMs: number = RATE_LIMIT_WINDOW_MS,
  ) {}

  #resetSeconds(startMs: number, nowMs: number): number {
    return Math.ceil((this.windowMs - (nowMs - startMs)) / 1000);
  }

  async hit(workspaceId: string, max: number, nowMs: number): Promise<BudgetState> {
    const { rows } = await this.pool.query<{ start_ms: number; requests: number }>({ name: 'govctl_budget_hit', text: HIT, values: [workspaceId, nowMs, this.windowMs] });
    const { start_ms: startMs, requests: count } = rows[0]!;
    return { exceeded: count > max, remaining: count >= max ? 0 : max - count, resetSeconds: this.#resetSeconds(startMs, nowMs) };
  }

  async chargeRecords(workspaceId: string, n: number, maxRecords: number, nowMs: number): Promise<BudgetState> {
    const { rows } = await this.pool.query<{ start_ms: number; records: number; last_ok: boolean }>({
      name: 'govctl_budget_charge',
      text: CHARGE,
      values: [workspaceId, nowMs, this.windowMs, n, maxRecords],
    });
    const { start_ms: startMs, records, last_ok: ok } = rows[0]!;
    const resetSeconds = this.#resetSeconds(startMs, nowMs);
    if (!ok) return { exceeded: true, remaining: Math.max(0, maxRecords - records), resetSeconds };
    return { exceeded: false, remaining: maxRecords - records, resetSeconds };
  }
}
