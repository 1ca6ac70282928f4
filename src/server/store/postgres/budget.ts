/**
 * Per-workspace budgets shared by every replica: one row per workspace holding its current fixed
 * window (start, requests, records), changed only under the row's lock. Requests are admitted in
 * batches: those that arrive while an admit statement is in flight queue, and the next statement
 * (govctl_admit, migrations.ts) reads each one's API key and counts it (and the records of a
 * single-record write) in arrival order, each workspace's row locked once and written once per
 * batch. A batch's records are charged by an upsert of their own (CHARGE). The rule is
 * FixedWindowLimiter's (memory-budget.ts): a window lasts RATE_LIMIT_WINDOW_MS from the first
 * request after the last one ended.
 *
 * Precision: counts are exact across replicas (every request and every record is counted once,
 * in the order the row lock grants batches, arrival order within a batch), request by request as
 * the statement-per-request design counted them. Window edges are set by the clock of the replica whose request
 * opens a window, so replicas' clocks differing by d move an edge by up to d.
 */
import { timingSafeEqual } from 'node:crypto';
import type pg from 'pg';
import { RATE_LIMIT_WINDOW_MS } from '../memory-budget.js';
import { hashApiKey } from '../api-keys.js';
import { holdsNul } from './pool.js';
import type { AuthContext } from '../rows.js';
import type { AdmitQuery, Admission, BudgetState, BudgetStore } from '../store.js';

/** `w` is the row before this statement (the alias), $2 now, $3 the window length. */
const ENDED = 'w.start_ms + $3::bigint <= $2::bigint';

/**
 * Each count (a charge, an admit batch) is its own statement and commits without waiting for the WAL flush
 * (`synchronous_commit = off` for its transaction alone, set inside the statement): a request
 * must not wait for an fsync to be counted, and a crash of PostgreSQL forgets at most the last
 * fraction of a second of counts (wal_writer_delay), which only ever lets a few more requests in.
 */
const NO_FLUSH = "(SELECT set_config('synchronous_commit', 'off', true)) AS no_flush";

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

/**
 * A batch of requests admitted in one statement (docs/decisions.md, "Requests admitted in
 * batches"): govctl_admit (migrations.ts, version 2) takes each item's key hash ($1), key clock
 * ($2), path workspace ($3, NULL when the path names none), budget clock ($4), most requests ($5),
 * records ($6) and most records ($7) as arrays in arrival order, and the window's length ($8);
 * it answers one row per item, in any order (`item` says which).
 */
const ADMIT_BATCH = 'SELECT * FROM govctl_admit($1::bytea[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint)';

interface AdmitRow {
  item: number;
  key_id: string | null;
  key_hash: Buffer | null;
  workspace_id: string;
  user_id: string;
  org_id: string;
  revoked_ms: number | null;
  expires_ms: number | null;
  start_ms: number | null;
  requests: number | null;
  records: number | null;
  last_ok: boolean | null;
}

/**
 * The path's workspace as the statement takes it. A path holding U+0000 (which no stored text, so
 * no workspace id, holds) names no workspace: sent as the empty string, which no workspace id is
 * either, since PostgreSQL refuses such a text and would fail the whole batch with it.
 */
function pathWorkspace(query: AdmitQuery): string | null {
  if (query.pathWorkspaceId === undefined) return null;
  return holdsNul(query.pathWorkspaceId) ? '' : query.pathWorkspaceId;
}

interface QueuedAdmit {
  readonly query: AdmitQuery;
  readonly hash: Buffer;
  readonly resolve: (admission: Admission) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Requests in one statement at most: a longer queue goes in several. Bounded so that one statement's
 * arrays, its time holding the rows' locks and a failure's reach stay small.
 */
export const MAX_ADMIT_BATCH = 256;

/**
 * Admit statements one replica keeps in flight at once (on different connections): while they run,
 * arriving requests queue for the next. One: a statement's fixed cost in PostgreSQL is most of its
 * cost at the batch sizes measured (docs/decisions.md, "Requests admitted in batches"), and a second
 * statement in flight would halve the batches; alternated runs with two showed no gain either.
 */
export const ADMITS_IN_FLIGHT = 1;

export class PgBudgetStore implements BudgetStore {
  /** requests waiting for the next statement, in arrival order */
  #queue: QueuedAdmit[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly windowMs: number = RATE_LIMIT_WINDOW_MS,
  ) {}

  #resetSeconds(startMs: number, nowMs: number): number {
    return Math.ceil((this.windowMs - (nowMs - startMs)) / 1000);
  }

  /**
   * Store.admit: queued, and admitted with the requests that arrive in this turn or while the
   * statement before is in flight, by the next statement (one round trip for the batch).
   */
  admit(query: AdmitQuery): Promise<Admission> {
    const hash = hashApiKey(query.apiKey);
    return new Promise<Admission>((resolve, reject) => {
      this.#queue.push({ query, hash, resolve, reject });
      this.#schedule();
    });
  }

  /** Dispatches the queue on the next turn (the requests parsed in this one join it), when a statement may start. */
  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= ADMITS_IN_FLIGHT || this.#queue.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      while (this.#inFlight < ADMITS_IN_FLIGHT && this.#queue.length > 0) {
        const batch = this.#queue.splice(0, MAX_ADMIT_BATCH);
        this.#inFlight += 1;
        void this.#admitBatch(batch).finally(() => {
          this.#inFlight -= 1;
          this.#schedule();
        });
      }
    });
  }

  /** One statement for `batch`; its failure (the store's error, pool.ts) is every item's. */
  async #admitBatch(batch: readonly QueuedAdmit[]): Promise<void> {
    let rows: AdmitRow[];
    try {
      ({ rows } = await this.pool.query<AdmitRow>({
        name: 'govctl_admit_batch',
        text: ADMIT_BATCH,
        values: [
          batch.map((queued) => queued.hash),
          batch.map((queued) => queued.query.nowMs),
          batch.map((queued) => pathWorkspace(queued.query)),
          batch.map((queued) => queued.query.budgetNowMs),
          batch.map((queued) => queued.query.maxRequests),
          batch.map((queued) => queued.query.records),
          batch.map((queued) => queued.query.maxRecords),
          this.windowMs,
        ],
      }));
    } catch (error) {
      for (const queued of batch) queued.reject(error);
      return;
    }
    const byItem = new Map(rows.map((row) => [row.item, row]));
    batch.forEach((queued, i) => {
      const row = byItem.get(i + 1);
      try {
        if (row === undefined) throw new Error(`govctl_admit answered no row for item ${i + 1} of ${batch.length}`);
        queued.resolve(this.#admission(queued, row));
      } catch (error) {
        queued.reject(error);
      }
    });
  }

  /** What the statement's row for one request means (the window's state after that request). */
  #admission({ query, hash }: QueuedAdmit, row: AdmitRow): Admission {
    const { budgetNowMs: nowMs, maxRequests, maxRecords } = query;
    // the hash matched in an index; compared again in constant time, as the SQLite backend does
    if (row.key_id === null || row.key_hash === null || !timingSafeEqual(row.key_hash, hash)) return { auth: null };
    if (row.revoked_ms !== null || (row.expires_ms !== null && row.expires_ms <= query.nowMs)) return { auth: null };
    const auth: AuthContext = { keyId: row.key_id, workspaceId: row.workspace_id, userId: row.user_id, orgId: row.org_id };
    if (row.start_ms === null) return { auth, counted: false };
    const count = row.requests!;
    const resetSeconds = this.#resetSeconds(row.start_ms, nowMs);
    const requests: BudgetState = { exceeded: count > maxRequests, remaining: count >= maxRequests ? 0 : maxRequests - count, resetSeconds };
    if (query.records <= 0 || requests.exceeded) return { auth, counted: true, requests, records: null };
    const charged = row.records!;
    const records: BudgetState = row.last_ok
      ? { exceeded: false, remaining: maxRecords - charged, resetSeconds }
      : { exceeded: true, remaining: Math.max(0, maxRecords - charged), resetSeconds };
    return { auth, counted: true, requests, records };
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
