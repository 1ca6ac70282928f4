/**
 * Per-workspace budgets shared by every replica: one row per workspace holding its current fixed
 * window (start, requests, records). A request's count (and the records of a single-record write)
 * is taken by the admission function (govctl_admit, schema.sql) for a batch of
 * requests at once, right after their API keys are read: it locks each workspace's row, counts
 * that workspace's requests one by one in variables, and writes the row once. A batch endpoint's
 * records are charged by a statement of their own (CHARGE: one `INSERT … ON CONFLICT … DO UPDATE
 * … RETURNING`, run under the row's lock). The rule is FixedWindowLimiter's (memory-budget.ts): a
 * window lasts RATE_LIMIT_WINDOW_MS from the first request after the last one ended.
 *
 * Precision: counts are exact across replicas (every request and every record is counted once,
 * in the order the row lock grants). Window edges are set by the clock of the replica whose request
 * opens a window, so replicas' clocks differing by d move an edge by up to d.
 */
import { timingSafeEqual } from 'node:crypto';
import type pg from 'pg';
import { RATE_LIMIT_WINDOW_MS } from '../memory-budget.js';
import { authContext, hashApiKey } from '../api-keys.js';
import type { ApiKeyRole } from '../rows.js';
import type { AdmitQuery, Admission, BudgetState, BudgetStore } from '../store.js';
import { Batches } from './batches.js';
import { holdsNul } from './pool.js';

/** `w` is the row before this statement (the alias), $2 now, $3 the window length. */
const ENDED = 'w.start_ms + $3::bigint <= $2::bigint';

/**
 * Counts commit without waiting for the WAL flush (`synchronous_commit = off` for their
 * transaction alone, set inside the statement here and in the admission function): a request
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

/** The admission function's row for one request whose key was found (schema.sql). */
interface AdmitRow {
  ord: number;
  key_id: string;
  key_hash: Buffer;
  workspace_id: string;
  user_id: string;
  org_id: string;
  role: ApiKeyRole;
  revoked_ms: number | null;
  expires_ms: number | null;
  start_ms: number | null;
  requests: number | null;
  records: number | null;
  last_ok: boolean | null;
}

/** Requests in one admission statement at most; more wait for the next. */
const MAX_BATCH = 500;

interface PendingAdmission {
  readonly query: AdmitQuery;
  readonly hash: Buffer;
  readonly resolve: (admission: Admission) => void;
  readonly reject: (error: unknown) => void;
}

export class PgBudgetStore implements BudgetStore {
  readonly #batches = new Batches<PendingAdmission>(MAX_BATCH, (batch) => this.#admitBatch(batch));

  constructor(
    private readonly pool: pg.Pool,
    private readonly windowMs: number = RATE_LIMIT_WINDOW_MS,
  ) {}

  #resetSeconds(startMs: number, nowMs: number): number {
    return Math.ceil((this.windowMs - (nowMs - startMs)) / 1000);
  }

  /**
   * Store.admit. Requests that arrive while a batch is in flight are admitted together in the next
   * one: one statement, one round trip and one transaction for the whole batch (govctl_admit), each
   * request still checked and counted on its own, in its arrival order within its workspace. A
   * batch is sent after the request arrived, so a revocation or expiry committed before it applies.
   */
  admit(query: AdmitQuery): Promise<Admission> {
    if (this.#batches.closed) return Promise.reject(new Error('the store is closed'));
    return new Promise<Admission>((resolve, reject) => this.#batches.add({ query, hash: hashApiKey(query.apiKey), resolve, reject }));
  }

  async #admitBatch(batch: readonly PendingAdmission[]): Promise<void> {
    let rows: AdmitRow[];
    try {
      ({ rows } = await this.pool.query<AdmitRow>({
        name: 'govctl_admit',
        text: 'SELECT * FROM govctl_admit($1::bytea[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint, $6::bigint[], $7::bigint[], $8::bigint[])',
        values: [
          batch.map((item) => item.hash),
          batch.map((item) => item.query.nowMs),
          // no workspace ID holds U+0000 (nor is empty): such a path names none, and counts nothing
          batch.map(({ query: { pathWorkspaceId: path } }) => (path === undefined ? null : holdsNul(path) ? '' : path)),
          batch.map((item) => item.query.budgetNowMs),
          this.windowMs,
          batch.map((item) => item.query.maxRequests),
          batch.map((item) => item.query.records),
          batch.map((item) => item.query.maxRecords),
        ],
      }));
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    const found = new Map<number, AdmitRow>();
    for (const row of rows) found.set(row.ord, row);
    // each request settled on its own: one that cannot be answered must not leave the others, or
    // the batches after them (Batches waits for this one), waiting for ever
    batch.forEach((item, i) => {
      try {
        item.resolve(this.#admission(item, found.get(i + 1)));
      } catch (error) {
        item.reject(error);
      }
    });
  }

  #admission({ query, hash }: PendingAdmission, row: AdmitRow | undefined): Admission {
    const { budgetNowMs: nowMs, maxRequests, maxRecords } = query;
    // the hash matched in an index; compared again in constant time, as the SQLite backend does
    if (!row || !timingSafeEqual(row.key_hash, hash)) return { auth: null };
    if (row.revoked_ms !== null || (row.expires_ms !== null && row.expires_ms <= query.nowMs)) return { auth: null };
    const auth = authContext(row);
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

  /** Admits what is queued, then refuses new requests. */
  async close(): Promise<void> {
    await this.#batches.close();
  }

  async chargeRecords(workspaceId: string, n: number, maxRecords: number, nowMs: number): Promise<BudgetState> {
    const { rows } = await this.pool.query<{ start_ms: number; records: number; last_ok: boolean }>({
      name: 'govctl_budget_charge',
      text: CHARGE,
      values: [workspaceId, nowMs, this.windowMs, n, maxRecords],
    });
    const { start_ms: startMs, records, last_ok: ok } = rows[0];
    const resetSeconds = this.#resetSeconds(startMs, nowMs);
    if (!ok) return { exceeded: true, remaining: Math.max(0, maxRecords - records), resetSeconds };
    return { exceeded: false, remaining: maxRecords - records, resetSeconds };
  }
}
