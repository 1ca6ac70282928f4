/**
 * Per-workspace budgets shared by every replica: one row per workspace holding its current fixed
 * window (start, requests, records), changed by one `INSERT … ON CONFLICT … DO UPDATE … RETURNING`
 * per request, which PostgreSQL runs under the row's lock. A request's count (and the records of a
 * single-record write) is that upsert inside the statement that reads its API key (ADMIT); a
 * batch's records are charged by a statement of their own (CHARGE). The rule is FixedWindowLimiter's
 * (memory-budget.ts): a window lasts RATE_LIMIT_WINDOW_MS from the first request after the last one ended.
 *
 * Precision: counts are exact across replicas (every request and every record is counted once,
 * in the order the row lock grants). Window edges are set by the clock of the replica whose request
 * opens a window, so replicas' clocks differing by d move an edge by up to d.
 */
import { timingSafeEqual } from 'node:crypto';
import type pg from 'pg';
import { RATE_LIMIT_WINDOW_MS } from '../memory-budget.js';
import { authContext, hashApiKey } from '../api-keys.js';
import type { AdmitQuery, Admission, BudgetState, BudgetStore } from '../store.js';

/** `w` is the row before this statement (the alias), $2 now, $3 the window length. */
const ENDED = 'w.start_ms + $3::bigint <= $2::bigint';

/**
 * Each count is its own statement and commits without waiting for the WAL flush
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
 * One request admitted in one statement (docs/decisions.md, "A request admitted in one statement"):
 * its key's row read by hash ($1) with its workspace's org; only when the key is valid at $2
 * (not revoked, not expired) and of the path's workspace ($3, NULL when the path names none), the
 * workspace's window counts one request at $4 (window $5, most $6 requests) and charges $7 records
 * (most $8 a window) when the request is within its budget and they all fit; else none (refused
 * whole). The key's row comes back whatever happened, the window's only when it was counted.
 */
const A_ENDED = 'w.start_ms + $5::bigint <= $4::bigint';
const A_REQUESTS = `(CASE WHEN ${A_ENDED} THEN 0 ELSE w.requests END)`;
const A_RECORDS = `(CASE WHEN ${A_ENDED} THEN 0 ELSE w.records END)`;
const A_OK = `(${A_REQUESTS} + 1 <= $6::bigint AND ${A_RECORDS} + $7::bigint <= $8::bigint)`;
const ADMIT = `
  WITH k AS (
    SELECT k.key_id, k.key_hash, k.workspace_id, k.user_id, ws.org_id, k.revoked_ms, k.expires_ms
      FROM api_keys k JOIN workspaces ws ON ws.workspace_id = k.workspace_id WHERE k.key_hash = $1
  ), b AS (
    INSERT INTO budget_windows AS w (workspace_id, start_ms, requests, records, last_ok)
      SELECT k.workspace_id, $4::bigint, 1,
             CASE WHEN 1 <= $6::bigint AND $7::bigint <= $8::bigint THEN $7::bigint ELSE 0 END,
             1 <= $6::bigint AND $7::bigint <= $8::bigint
        FROM k, ${NO_FLUSH}
       WHERE k.revoked_ms IS NULL AND (k.expires_ms IS NULL OR k.expires_ms > $2::bigint) AND ($3::text IS NULL OR k.workspace_id = $3::text)
    ON CONFLICT (workspace_id) DO UPDATE SET
      start_ms = CASE WHEN ${A_ENDED} THEN $4::bigint ELSE w.start_ms END,
      requests = ${A_REQUESTS} + 1,
      records  = ${A_RECORDS} + CASE WHEN ${A_OK} THEN $7::bigint ELSE 0 END,
      last_ok  = ${A_OK}
    RETURNING start_ms, requests, records, last_ok
  )
  SELECT k.*, b.start_ms, b.requests, b.records, b.last_ok FROM k LEFT JOIN b ON true`;

interface AdmitRow {
  key_id: string;
  key_hash: Buffer;
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

export class PgBudgetStore implements BudgetStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly windowMs: number = RATE_LIMIT_WINDOW_MS,
  ) {}

  #resetSeconds(startMs: number, nowMs: number): number {
    return Math.ceil((this.windowMs - (nowMs - startMs)) / 1000);
  }

  /** Store.admit: one round trip to the database per request. */
  async admit(query: AdmitQuery): Promise<Admission> {
    const hash = hashApiKey(query.apiKey);
    const { budgetNowMs: nowMs, maxRequests, maxRecords } = query;
    const { rows } = await this.pool.query<AdmitRow>({
      name: 'govctl_admit',
      text: ADMIT,
      values: [hash, query.nowMs, query.pathWorkspaceId ?? null, nowMs, this.windowMs, maxRequests, query.records, maxRecords],
    });
    const row = rows[0];
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
