/**
 * The PostgreSQL backend of the store interface (../store.ts): stateless replicas of `govctl
 * serve` on one database. Everything that must hold across replicas is decided by the database:
 *
 * - API keys and budgets: each request's key row read, and its workspace's budget row counted by an
 *   upsert, in one statement for the requests that arrive together (budget.ts, admit): a revocation
 *   applies at once everywhere;
 * - idempotency keys and a workspace's log indexes: written under the workspace's log-head row
 *   lock, taken by each group commit (writer.ts), the primary keys as the backstop;
 * - the log's integration: one replica at a time, under a lease row (lease.ts, log-storage.ts).
 *
 * Writes are grouped per replica (writer.ts) and acknowledged after COMMIT with
 * `synchronous_commit` on (set for each group's transaction, whatever the server's default).
 */
import type pg from 'pg';
import { IdGenerator } from '../../ids.js';
import { LedgerQueryError } from '../../ledger/notes.js';
import { countsFromMs } from '../derived.js';
import { attestationResult, evidenceResult, IDEMPOTENCY_RETENTION_MS } from '../idempotency.js';
import {
  ATTESTATION_INSERT_COLUMNS,
  EVIDENCE_INSERT_COLUMNS,
  evidenceInsertValues,
  type AttestationRow,
  type IdempotencyClaim,
  type IdempotencyHit,
} from '../rows.js';
import type { AdmitQuery, Admission, EvidenceWrite, Store, Stored } from '../store.js';
import { PgBudgetStore } from './budget.js';
import { derivedStatements, lastEarned, type DerivedEvent } from './derived.js';
import { PgIdentityStore } from './identity.js';
import { TransparencyLog } from '../../ledger/log.js';
import { PgLogStorage, type PgLedgerOptions } from './log-storage.js';
import { migrate } from './migrate.js';
import { createPool } from './pool.js';
import { PgAttestationReads, PgEvidenceReads } from './records.js';
import { PgGatePolicyLog } from './gate-policy.js';
import { PgSigningKeyStore, PgSystemReads } from './settings.js';
import { WorkspaceKeys } from './workspace-keys.js';
import { Deferred, Group, PgGroupCommitWriter } from './writer.js';

export interface PostgresStoreOptions {
  /** the transparency log's key, origin prefix, clock and lease length */
  ledger?: PgLedgerOptions;
  /** connections this replica opens at most (default {@link POOL_SIZE}) */
  poolSize?: number;
  /** the budget window (default RATE_LIMIT_WINDOW_MS) */
  budgetWindowMs?: number;
}

/**
 * Connections a replica opens at most. Each request holds one for each of its statements (its key
 * and budget, its idempotency read) and the group commit one for its transaction; with 10, ten concurrent clients queued
 * for connections (evidence POST about 720 req/s against about 980 with 20, alternating 4 s runs).
 */
export const POOL_SIZE = 20;

/** Each evidence column's PostgreSQL type, for the unnest of a group's rows. */
const EVIDENCE_TYPES: Record<(typeof EVIDENCE_INSERT_COLUMNS)[number], string> = {
  record_id: 'text',
  workspace_id: 'text',
  ws_key: 'int',
  record_type: 'text',
  system_name: 'text',
  identity: 'text',
  resource: 'text',
  environment: 'text',
  occurred_at: 'text',
  occurred_ms: 'bigint',
  payload: 'text',
  client_sig: 'text',
  client_sig_algo: 'text',
  source: 'text',
  mapped_controls: 'text',
  received_at: 'text',
  received_ms: 'bigint',
};

const INSERT_EVIDENCE = `INSERT INTO evidence (${EVIDENCE_INSERT_COLUMNS.join(', ')})
  SELECT * FROM unnest(${EVIDENCE_INSERT_COLUMNS.map((column, i) => `$${i + 1}::${EVIDENCE_TYPES[column]}[]`).join(', ')})`;

/** An expired key not yet pruned is taken over by the new write ($6: the retention cut-off). */
const REMEMBER_KEYS = `INSERT INTO idempotency_keys AS k (workspace_id, idem_key, content_hash, result, created_ms)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])
  ON CONFLICT (workspace_id, idem_key) DO UPDATE SET content_hash = excluded.content_hash, result = excluded.result, created_ms = excluded.created_ms
    WHERE k.created_ms < excluded.created_ms - ${IDEMPOTENCY_RETENTION_MS}`;

/** Expired keys are deleted at most this often, by the group that comes next. */
const PRUNE_EVERY_MS = 60_000;
const PRUNE_BATCH = 10_000;
/** The group memo entry holding the latest time of the keys the group adds (what #prune prunes by). */
const PRUNE_NOW = 'prune\u0000now';

export class PostgresStore implements Store {
  readonly backend = 'postgres';
  readonly keys: WorkspaceKeys;
  readonly identity: PgIdentityStore;
  readonly budget: PgBudgetStore;
  readonly evidence: PgEvidenceReads;
  readonly attestations: PgAttestationReads;
  readonly systems: PgSystemReads;
  readonly gatePolicy: PgGatePolicyLog;
  readonly signingKeys: PgSigningKeyStore;
  readonly ledger: TransparencyLog;
  /** the log's storage: its leaves are appended by the group commit, its lease decides who integrates */
  readonly log: PgLogStorage;
  readonly writer: PgGroupCommitWriter;
  readonly #ids: IdGenerator;
  #lastPruneMs = 0;

  /** @param lastIds the last record and attestation ids stored: new ids sort after them (ids.ts) */
  constructor(
    readonly pool: pg.Pool,
    options: PostgresStoreOptions = {},
    lastIds: readonly (string | undefined)[] = [],
  ) {
    this.#ids = new IdGenerator(lastIds);
    this.keys = new WorkspaceKeys(pool);
    this.identity = new PgIdentityStore(pool);
    this.budget = new PgBudgetStore(pool, options.budgetWindowMs);
    this.evidence = new PgEvidenceReads(pool, this.keys);
    this.attestations = new PgAttestationReads(pool);
    this.systems = new PgSystemReads(pool);
    this.signingKeys = new PgSigningKeyStore(pool);
    this.log = new PgLogStorage(pool, this.keys, options.ledger);
    this.ledger = new TransparencyLog(this.log, options.ledger);
    this.writer = new PgGroupCommitWriter(pool, {
      begin: (group) => this.#readClaims(group),
      settle: (group) => this.#settle(group),
      end: async (group) => {
        for (const { sql, params } of derivedStatements(group.derived as DerivedEvent[])) group.addStatement(sql, params);
        this.log.advanceHeads(group);
        await this.#prune(group);
      },
    });
    this.gatePolicy = new PgGatePolicyLog(pool, this.writer, this.keys, this.log);
  }

  async admit(query: AdmitQuery): Promise<Admission> {
    return this.budget.admit(query);
  }

  newId(prefix: 'rec' | 'att'): string {
    return this.#ids.newId(prefix);
  }

  async lastEarned(workspaceId: string): Promise<Map<string, number>> {
    return lastEarned(this.pool, workspaceId);
  }

  // ---- idempotency ----------------------------------------------------------------------------

  async findIdempotent(workspaceId: string, claim: IdempotencyClaim, nowMs: number): Promise<IdempotencyHit | null> {
    return this.#findKey(this.pool, workspaceId, claim, nowMs);
  }

  async #findKey(on: Pick<pg.ClientBase, 'query'>, workspaceId: string, claim: IdempotencyClaim, nowMs: number): Promise<IdempotencyHit | null> {
    const { rows } = await on.query<{ content_hash: string; result: string }>({
      name: 'govctl_idempotency_find',
      text: 'SELECT content_hash, result FROM idempotency_keys WHERE workspace_id = $1 AND idem_key = $2 AND created_ms >= $3',
      values: [workspaceId, claim.key, nowMs - IDEMPOTENCY_RETENTION_MS],
    });
    const row = rows[0];
    if (row === undefined) return null;
    if (row.content_hash !== claim.hash) return { kind: 'conflict' };
    return { kind: 'replay', result: JSON.parse(row.result) as Record<string, unknown> };
  }

  /**
   * The key's hit inside a group: a write earlier in the same group first, then the table (read
   * under the workspace's head lock, so no other replica can be storing the same key meanwhile):
   * the keys the group's writes declared were read together when the group began (#readClaims).
   */
  async #findInGroup(group: Group, workspaceId: string, claim: IdempotencyClaim, nowMs: number): Promise<IdempotencyHit | null> {
    const earlier = group.memo.get(`idem\u0000${workspaceId}\u0000${claim.key}`) as { hash: string; result: Record<string, unknown> } | undefined;
    if (earlier !== undefined) return earlier.hash === claim.hash ? { kind: 'replay', result: earlier.result } : { kind: 'conflict' };
    const read = `read\u0000${workspaceId}\u0000${claim.key}`;
    if (!group.memo.has(read)) return this.#findKey(group.client, workspaceId, claim, nowMs);
    const stored = group.memo.get(read) as { content_hash: string; result: string; created_ms: number } | null;
    if (stored === null || stored.created_ms < nowMs - IDEMPOTENCY_RETENTION_MS) return null;
    if (stored.content_hash !== claim.hash) return { kind: 'conflict' };
    return { kind: 'replay', result: JSON.parse(stored.result) as Record<string, unknown> };
  }

  /** The group's begin hook: every key its writes declared, read in one query under the head locks. */
  async #readClaims(group: Group): Promise<void> {
    if (group.claimed.length === 0) return;
    const { rows } = await group.client.query<{ workspace_id: string; idem_key: string; content_hash: string; result: string; created_ms: number }>({
      name: 'govctl_idempotency_read',
      text: `SELECT k.workspace_id, k.idem_key, k.content_hash, k.result, k.created_ms FROM idempotency_keys k
        JOIN unnest($1::text[], $2::text[]) AS c (workspace_id, idem_key) ON k.workspace_id = c.workspace_id AND k.idem_key = c.idem_key`,
      values: [group.claimed.map((c) => c.workspaceId), group.claimed.map((c) => c.key)],
    });
    for (const claim of group.claimed) group.memo.set(`read\u0000${claim.workspaceId}\u0000${claim.key}`, null);
    for (const row of rows) group.memo.set(`read\u0000${row.workspace_id}\u0000${row.idem_key}`, row);
  }

  #remember(group: Group, workspaceId: string, claim: IdempotencyClaim, result: Record<string, unknown>, nowMs: number): void {
    group.memo.set(`idem\u0000${workspaceId}\u0000${claim.key}`, { hash: claim.hash, result });
    group.add('idempotency_keys', REMEMBER_KEYS, [workspaceId, claim.key, claim.hash, JSON.stringify(result), nowMs]);
    const latest = group.memo.get(PRUNE_NOW) as number | undefined;
    if (latest === undefined || nowMs > latest) group.memo.set(PRUNE_NOW, nowMs);
  }

  /**
   * Deletes keys past their retention, at most every PRUNE_EVERY_MS, in a group that adds keys and
   * by the time of its writes (the service's clock, as the SQLite backend does), not this
   * process's wall clock: a service with an injected clock prunes by that clock.
   */
  async #prune(group: Group): Promise<void> {
    const nowMs = group.memo.get(PRUNE_NOW) as number | undefined;
    if (nowMs === undefined || nowMs - this.#lastPruneMs < PRUNE_EVERY_MS) return;
    this.#lastPruneMs = nowMs;
    await group.client.query('DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE created_ms < $1 LIMIT $2)', [
      nowMs - IDEMPOTENCY_RETENTION_MS,
      PRUNE_BATCH,
    ]);
  }

  // ---- writes ---------------------------------------------------------------------------------

  async #wsKey(workspaceId: string): Promise<number> {
    const key = await this.keys.get(workspaceId);
    // routes write only for an authenticated key's workspace, so this is a caller's mistake
    if (key === undefined) throw new LedgerQueryError('not_found', `workspace ${workspaceId} has no key: it was not provisioned`);
    return key;
  }

  async recordEvidence(write: EvidenceWrite): Promise<Stored> {
    const wsKey = await this.#wsKey(write.row.workspace_id);
    return this.writer.write([wsKey], (group) => this.#insertEvidence(group, wsKey, write), claimsOf([write.row], [write.claim]));
  }

  async recordEvidenceBatch(writes: readonly EvidenceWrite[]): Promise<Stored[]> {
    const keys = new Map<string, number>();
    for (const { row } of writes) if (!keys.has(row.workspace_id)) keys.set(row.workspace_id, await this.#wsKey(row.workspace_id));
    return this.writer.write(
      [...keys.values()],
      async (group) => {
        const outcomes: Stored[] = [];
        for (const write of writes) outcomes.push(await this.#insertEvidence(group, keys.get(write.row.workspace_id)!, write));
        return outcomes;
      },
      claimsOf(
        writes.map((write) => write.row),
        writes.map((write) => write.claim),
      ),
    );
  }

  async #insertEvidence(group: Group, wsKey: number, write: EvidenceWrite): Promise<Stored> {
    const { row, claim } = write;
    if (claim !== undefined) {
      const hit = await this.#findInGroup(group, row.workspace_id, claim, row.received_ms);
      if (hit !== null) return { hit };
    }
    group.add('evidence', INSERT_EVIDENCE, evidenceInsertValues(row, wsKey));
    const leafIndex = this.log.appendEvidence(group, wsKey, row);
    if (claim !== undefined) this.#remember(group, row.workspace_id, claim, evidenceResult(row, write.controls, leafIndex), row.received_ms);
    const earnedMs = countsFromMs(row.occurred_ms, row.received_ms);
    group.derived.push(
      {
        system: {
          workspaceId: row.workspace_id,
          name: row.system_name,
          evidenceMs: earnedMs,
          ...(write.riskTier !== undefined ? { risk: { tier: write.riskTier, atMs: row.occurred_ms } } : {}),
          record: { type: row.record_type, controls: write.controls },
        },
      } satisfies DerivedEvent,
      { coverage: { workspaceId: row.workspace_id, controls: write.controls, earnedMs } } satisfies DerivedEvent,
    );
    return { hit: null, leafIndex };
  }

  async recordAttestations(rows: readonly AttestationRow[], claims: readonly (IdempotencyClaim | undefined)[] = []): Promise<(Stored | null)[]> {
    const keys = new Map<string, number>();
    for (const row of rows) if (!keys.has(row.workspace_id)) keys.set(row.workspace_id, await this.#wsKey(row.workspace_id));
    if (claims.every((claim) => claim === undefined)) {
      // No keys to look up: the rows join the group's one attestation insert (#settle).
      return this.writer.write<(Stored | null)[]>([...keys.values()], (group) => {
        const entry: PendingAttestations = { rows, keys, outcomes: [] };
        group.pending.push(entry);
        return new Deferred(() => entry.outcomes);
      });
    }
    return this.writer.write(
      [...keys.values()],
      async (group) => {
        // In order, as the SQLite backend: a row's key is looked up after the rows before it are
        // stored (their keys count). Rows without a key go in one multi-row insert per run; a
        // signature stored already, or twice in the list, is stored once (the first).
        const outcomes: (Stored | null)[] = [];
        let run: number[] = [];
        const store = async (indexes: number[]): Promise<void> => {
          if (indexes.length === 0) return;
          const columns = ATTESTATION_INSERT_COLUMNS.map((column) => indexes.map((i) => rows[i][column]));
          const result = await group.client.query<{ attestation_id: string }>(INSERT_ATTESTATIONS, columns);
          const stored = new Set(result.rows.map((row) => row.attestation_id));
          for (const i of indexes) {
            const row = rows[i];
            if (!stored.has(row.attestation_id)) {
              outcomes[i] = null;
              continue;
            }
            const leafIndex = this.log.appendAttestation(group, keys.get(row.workspace_id)!, row);
            const claim = claims[i];
            if (claim !== undefined) this.#remember(group, row.workspace_id, claim, attestationResult(row, leafIndex), row.received_ms);
            const countsFrom = countsFromMs(row.executed_ms, row.received_ms);
            group.derived.push({
              system: { workspaceId: row.workspace_id, name: row.system_name, evidenceMs: countsFrom, attestedMs: countsFrom },
            } satisfies DerivedEvent);
            outcomes[i] = { hit: null, leafIndex };
          }
        };
        for (const [i, row] of rows.entries()) {
          const claim = claims[i];
          if (claim === undefined) {
            run.push(i);
            continue;
          }
          await store(run);
          run = [];
          const hit = await this.#findInGroup(group, row.workspace_id, claim, row.received_ms);
          if (hit !== null) outcomes[i] = { hit };
          else await store([i]);
        }
        await store(run);
        return outcomes;
      },
      claimsOf(rows, claims),
    );
  }

  /**
   * The group's settle hook: every attestation its writes left, in one insert in their order (a
   * signature stored already, or twice among them, is stored once: the first), then their leaves.
   */
  async #settle(group: Group): Promise<void> {
    const entries = group.pending.splice(0) as PendingAttestations[];
    if (entries.length === 0) return;
    const all = entries.flatMap((entry) => entry.rows);
    const columns = ATTESTATION_INSERT_COLUMNS.map((column) => all.map((row) => row[column]));
    const result = await group.client.query<{ attestation_id: string }>({ name: 'govctl_insert_attestations', text: INSERT_ATTESTATIONS, values: columns });
    const stored = new Set(result.rows.map((row) => row.attestation_id));
    for (const entry of entries) {
      entry.outcomes = entry.rows.map((row) => {
        if (!stored.has(row.attestation_id)) return null;
        stored.delete(row.attestation_id); // an id is stored once
        const leafIndex = this.log.appendAttestation(group, entry.keys.get(row.workspace_id)!, row);
        const countsFrom = countsFromMs(row.executed_ms, row.received_ms);
        group.derived.push({
          system: { workspaceId: row.workspace_id, name: row.system_name, evidenceMs: countsFrom, attestedMs: countsFrom },
        } satisfies DerivedEvent);
        return { hit: null, leafIndex };
      });
    }
  }

  async ready(): Promise<boolean> {
    try {
      await this.pool.query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.budget.close();
    await this.writer.close();
    await this.ledger.close();
    await this.pool.end();
  }
}

/** The idempotency keys of a write's rows, for its group to read together. */
function claimsOf(rows: readonly { workspace_id: string }[], claims: readonly (IdempotencyClaim | undefined)[]): { workspaceId: string; key: string }[] {
  const out: { workspaceId: string; key: string }[] = [];
  rows.forEach((row, i) => {
    const claim = claims[i];
    if (claim !== undefined) out.push({ workspaceId: row.workspace_id, key: claim.key });
  });
  return out;
}

/** Attestations a write left for its group's one insert, and their outcomes once it ran. */
interface PendingAttestations {
  rows: readonly AttestationRow[];
  keys: ReadonlyMap<string, number>;
  outcomes: (Stored | null)[];
}

/** Each attestation column's PostgreSQL type, for the unnest of a group's rows. */
const ATTESTATION_TYPES: Record<(typeof ATTESTATION_INSERT_COLUMNS)[number], string> = {
  attestation_id: 'text',
  workspace_id: 'text',
  system_name: 'text',
  agent_name: 'text',
  tool_name: 'text',
  input_hash: 'text',
  output_hash: 'text',
  executed_at: 'text',
  executed_ms: 'bigint',
  record: 'text',
  witness_form: 'text',
  witness_sig: 'bytea',
  signed_ms: 'bigint',
  key_fingerprint: 'text',
  trust_tier: 'text',
  tier_reason: 'text',
  source: 'text',
  received_at: 'text',
  received_ms: 'bigint',
};

const INSERT_ATTESTATIONS = `INSERT INTO attestations (${ATTESTATION_INSERT_COLUMNS.join(', ')})
  SELECT ${ATTESTATION_INSERT_COLUMNS.join(', ')} FROM unnest(${ATTESTATION_INSERT_COLUMNS.map((column, i) => `$${i + 1}::${ATTESTATION_TYPES[column]}[]`).join(', ')})
    WITH ORDINALITY AS a (${ATTESTATION_INSERT_COLUMNS.join(', ')}, ord) ORDER BY ord
  ON CONFLICT (signed_ms, witness_sig) WHERE witness_sig IS NOT NULL DO NOTHING
  RETURNING attestation_id`;

/**
 * Opens the store on `url` (postgres://…), creating the schema first in an empty database (safe when several
 * replicas start at once: migrate.ts).
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const pool = createPool(url, { max: options.poolSize ?? POOL_SIZE });
  try {
    const client = await pool.connect();
    let lastIds: (string | undefined)[];
    try {
      await migrate(client);
      // New ids sort after the last stored ones (ids.ts): the list's tie order follows them.
      const { rows } = await client.query<{ id: string | null }>(
        `SELECT (SELECT record_id FROM evidence ORDER BY seq DESC LIMIT 1) AS id
         UNION ALL SELECT (SELECT attestation_id FROM attestations ORDER BY seq DESC LIMIT 1)`,
      );
      lastIds = rows.map((row) => row.id ?? undefined);
    } finally {
      client.release();
    }
    const store = new PostgresStore(pool, options, lastIds);
    await store.log.checkKey();
    return store;
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
}
