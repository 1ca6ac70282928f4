/**
 * The SQLite backend of the store (store.ts): one database file (database.ts,
 * schema.sql), a module per mechanism, and the group-commit writer every write goes through
 * (writer.ts). A write that arrives updates the evidence or attestation table, its leaf in the
 * transparency log, the control coverage and the systems table in the same transaction, so the
 * derived tables can never disagree with the records.
 *
 * Each module implements its part of the interface itself (async methods over better-sqlite3's
 * synchronous calls); what a group commit's transaction calls (inserts, log appends, idempotency
 * keys, derived rows) stays synchronous, so that the transaction never awaits. `db`, `writer`,
 * `idempotency` and `tables` stay reachable for this backend's own tests.
 */
import { IdGenerator } from '../../ids.js';
import { countsFromMs } from '../derived.js';
import { attestationResult, evidenceResult } from '../idempotency.js';
import { TransparencyLog } from '../../ledger/log.js';
import type { LedgerOptions } from '../../ledger/notes.js';
import { FixedWindowLimiter } from '../memory-budget.js';
import type { AttestationRow, IdempotencyClaim } from '../rows.js';
import type * as Interface from '../store.js';
import type { EvidenceWrite, Store, Stored } from '../store.js';
import { AttestationStore } from './attestations.js';
import { CoverageStore } from './coverage.js';
import { checkDatabaseFile, openDatabase, type Db } from './database.js';
import { EvidenceStore } from './evidence.js';
import { GatePolicyLog } from './gate-policy.js';
import { IdempotencyStore } from './idempotency.js';
import { IdentityStore } from './identity.js';
import { SigningKeyStore } from './signing-keys.js';
import { SystemStore } from './systems.js';
import { SqliteLogStorage } from './log-storage.js';
import { GroupCommitWriter } from './writer.js';

export type { Db } from './database.js';

/** Tuning a test may change. */
export interface SqliteStoreOptions {
  /** see LIST_INDEX_BATCH in evidence.ts */
  listIndexBatch?: number;
  /** the transparency log's key and origin (ledger/log.ts); without a key no checkpoint is signed */
  ledger?: LedgerOptions;
}

/** The synchronous modules behind the interface, one per table family. */
export interface SqliteTables {
  identity: IdentityStore;
  evidence: EvidenceStore;
  attestations: AttestationStore;
  coverage: CoverageStore;
  systems: SystemStore;
  signingKeys: SigningKeyStore;
  /** the log's storage: its leaves are appended by the writes */
  log: SqliteLogStorage;
}

export class SqliteStore implements Store {
  readonly backend = 'sqlite';
  readonly writer: GroupCommitWriter;
  readonly idempotency: IdempotencyStore;
  readonly tables: SqliteTables;
  readonly identity: IdentityStore;
  /** One process serves every request of a SQLite database (the serve lock): counting in memory is exact. */
  readonly budget: Interface.BudgetStore = this;
  readonly #limiter = new FixedWindowLimiter();
  readonly evidence: EvidenceStore;
  readonly attestations: AttestationStore;
  readonly systems: SystemStore;
  readonly gatePolicy: GatePolicyLog;
  readonly signingKeys: SigningKeyStore;
  readonly ledger: TransparencyLog;
  readonly #ids: IdGenerator;

  constructor(
    readonly db: Db,
    options: SqliteStoreOptions = {},
  ) {
    const tables: SqliteTables = {
      identity: new IdentityStore(db),
      evidence: new EvidenceStore(db, options.listIndexBatch),
      attestations: new AttestationStore(db),
      coverage: new CoverageStore(db),
      systems: new SystemStore(db),
      signingKeys: new SigningKeyStore(db),
      log: new SqliteLogStorage(db),
    };
    this.tables = tables;
    this.idempotency = new IdempotencyStore(db);
    const { coverage, systems, evidence, log } = tables;
    // Coverage is written once per control and systems once per system per group commit (the
    // latest time wins either way); the list tables' entries a batch at a time.
    this.writer = new GroupCommitWriter(db, {
      begin: () => {
        log.beginGroup();
        coverage.discard();
        systems.discard();
      },
      end: () => {
        systems.flush();
        coverage.flush();
        evidence.indexPendingLists();
      },
    });
    // New ids sort after the last stored one (ids.ts): the list's tie order needs it.
    const lastRecordId = db.prepare<[], string>('SELECT record_id FROM evidence ORDER BY seq DESC LIMIT 1').pluck().get();
    const lastAttestationId = db.prepare<[], string>('SELECT attestation_id FROM attestations ORDER BY seq DESC LIMIT 1').pluck().get();
    this.#ids = new IdGenerator([lastRecordId, lastAttestationId]);

    this.identity = tables.identity;
    this.evidence = tables.evidence;
    this.attestations = tables.attestations;
    this.systems = tables.systems;
    // Changes go through the group commit: a change's leaf is appended like a record's.
    this.gatePolicy = new GatePolicyLog(db, this.writer, log);
    this.ledger = new TransparencyLog(log, options.ledger);
    this.signingKeys = tables.signingKeys;
  }

  newId(prefix: 'rec' | 'att'): string {
    return this.#ids.newId(prefix);
  }

  /** The key from the cached identity store, then the counts in memory: no database write per request. */
  async admit(query: Interface.AdmitQuery): Promise<Interface.Admission> {
    const auth = await this.identity.authenticate(query.apiKey, query.nowMs);
    if (auth === null) return { auth: null };
    if (query.pathWorkspaceId !== undefined && query.pathWorkspaceId !== auth.workspaceId) return { auth, counted: false };
    const requests = this.#limiter.hit(auth.workspaceId, query.maxRequests, query.budgetNowMs);
    const records =
      query.records > 0 && !requests.exceeded ? this.#limiter.chargeRecords(auth.workspaceId, query.records, query.maxRecords, query.budgetNowMs) : null;
    return { auth, counted: true, requests, records };
  }

  async chargeRecords(workspaceId: string, n: number, maxRecords: number, nowMs: number): Promise<Interface.BudgetState> {
    return this.#limiter.chargeRecords(workspaceId, n, maxRecords, nowMs);
  }

  async findIdempotent(workspaceId: string, claim: IdempotencyClaim, nowMs: number) {
    return this.idempotency.find(workspaceId, claim, nowMs);
  }

  async lastEarned(workspaceId: string): Promise<Map<string, number>> {
    return this.tables.coverage.lastEarned(workspaceId);
  }

  /** Open, answering, and still the file it was opened as (a replaced file refuses every write). */
  async ready(): Promise<boolean> {
    if (!this.db.open) return false;
    checkDatabaseFile(this.db);
    return this.db.prepare<[], number>('SELECT 1').pluck().get() === 1;
  }

  /**
   * Stores one evidence record (its log leaf in the same transaction) and updates coverage and
   * systems; resolves after the commit with its leaf index, or with what its idempotency key
   * already stood for (nothing stored).
   */
  recordEvidence(write: EvidenceWrite): Promise<Stored> {
    return this.writer.write(() => {
      const outcome = this.#insertEvidence(write);
      if (outcome.hit === null) this.#deferDerived(write);
      return outcome;
    });
  }

  /**
   * Stores evidence records in one transaction (one durable group), in order; each item's
   * outcome as {@link recordEvidence}'s. A key used twice in the list: the second is a replay
   * (or conflict) of the first.
   */
  recordEvidenceBatch(writes: readonly EvidenceWrite[]): Promise<Stored[]> {
    return this.writer.write(() => {
      const outcomes = writes.map((write) => this.#insertEvidence(write));
      // last, once every insert has succeeded
      writes.forEach((write, i) => {
        if (outcomes[i].hit === null) this.#deferDerived(write);
      });
      return outcomes;
    });
  }

  /** One evidence insert inside a group's transaction; the key is checked again here, under the write lock. */
  #insertEvidence(write: EvidenceWrite): Stored {
    const { row, claim } = write;
    if (claim !== undefined) {
      const hit = this.idempotency.find(row.workspace_id, claim, row.received_ms);
      if (hit !== null) return { hit };
    }
    this.tables.evidence.insert(row);
    const leafIndex = this.tables.log.appendEvidence(row);
    if (claim !== undefined) this.idempotency.remember(row.workspace_id, claim, evidenceResult(row, write.controls, leafIndex), row.received_ms);
    return { hit: null, leafIndex };
  }

  /** Systems and coverage of a stored record: written by the group's end, so deferred only once its insert has succeeded. */
  #deferDerived(write: EvidenceWrite): void {
    const { row } = write;
    const earnedMs = countsFromMs(row.occurred_ms, row.received_ms);
    this.tables.systems.defer({
      workspaceId: row.workspace_id,
      name: row.system_name,
      evidenceMs: earnedMs,
      ...(write.riskTier !== undefined ? { risk: { tier: write.riskTier, atMs: row.occurred_ms } } : {}),
      record: { type: row.record_type, controls: write.controls },
    });
    this.tables.coverage.defer(row.workspace_id, write.controls, earnedMs);
  }

  /**
   * Stores attestations and updates systems; resolves after the commit with each row's outcome.
   * A row with an idempotency claim (`claims[i]`) whose key is already used is not stored: its
   * outcome is what the key stood for (checked here, under the write lock, before any insert).
   * A row whose witness_sig is stored already (a replay, also of an earlier row of the same call)
   * stores nothing either: its outcome is null.
   */
  recordAttestations(rows: readonly AttestationRow[], claims: readonly (IdempotencyClaim | undefined)[] = []): Promise<(Stored | null)[]> {
    return this.writer.write(() => {
      const outcomes = rows.map((row, i): Stored | null => {
        const claim = claims[i];
        if (claim !== undefined) {
          const hit = this.idempotency.find(row.workspace_id, claim, row.received_ms);
          if (hit !== null) return { hit };
        }
        if (!this.tables.attestations.insert(row)) return null;
        const leafIndex = this.tables.log.appendAttestation(row);
        if (claim !== undefined) this.idempotency.remember(row.workspace_id, claim, attestationResult(row, leafIndex), row.received_ms);
        return { hit: null, leafIndex };
      });
      // last, once every insert has succeeded: one systems update per system of the group
      for (const [i, row] of rows.entries()) {
        if (outcomes[i] === null || outcomes[i].hit !== null) continue;
        const countsFrom = countsFromMs(row.executed_ms, row.received_ms);
        this.tables.systems.defer({ workspaceId: row.workspace_id, name: row.system_name, evidenceMs: countsFrom, attestedMs: countsFrom });
      }
      return outcomes;
    });
  }

  /** Commits queued writes and closes the database. */
  async close(): Promise<void> {
    await this.writer.close();
    if (this.db.open) await this.ledger.close();
    if (this.db.open) this.db.close();
  }
}

/** Opens (creating and migrating as needed) the SQLite store at `path` (`:memory:` for a throw-away one). */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteStore {
  return new SqliteStore(openDatabase(path), options);
}
