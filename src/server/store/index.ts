/**
 * The service's store: one SQLite database (database.ts), a module per table family, and the
 * group-commit writer every write goes through. A write that arrives updates the evidence or
 * attestation table, the control coverage and the systems table in the same transaction, so the
 * derived tables can never disagree with the records.
 */
import { uuidv7After } from '../ids.js';
import { AttestationStore, type AttestationRow } from './attestations.js';
import { CoverageStore } from './coverage.js';
import { openDatabase, type Db } from './database.js';
import { EvidenceStore, type EvidenceRow } from './evidence.js';
import { GatePolicyStore } from './gate-policy.js';
import { IdentityStore } from './identity.js';
import { LedgerStore, type LedgerOptions } from './ledger.js';
import { SystemStore } from './systems.js';
import { IdempotencyStore, type IdempotencyClaim, type IdempotencyHit } from './idempotency.js';
import { GroupCommitWriter } from './writer.js';

export type { Db } from './database.js';
export type { EvidenceRow, EvidenceListItem, ListPosition } from './evidence.js';
export type { AttestationRow, StoredAttestationRow, TierReason, TrustTier } from './attestations.js';
export { SigningKeyStore, KEY_POLICIES, type KeyPolicy, type SigningKeyInfo } from './signing-keys.js';
export type { ApiKeyInfo, AuthContext, CreatedApiKey, ProvisionOptions, Provisioned } from './identity.js';
export type { SystemRow } from './systems.js';
export type { IdempotencyClaim, IdempotencyHit } from './idempotency.js';

/** An evidence record to store, with what it earns. */
export interface EvidenceWrite {
  row: EvidenceRow;
  controls: readonly string[];
  /** the risk level, when the record is an ai_risk_assessment */
  riskTier?: string;
  /** the write's idempotency key, left with its result in the same transaction */
  claim?: IdempotencyClaim;
}

/** The result an evidence write's idempotency key is remembered with (and replayed as). */
export function evidenceResult(row: EvidenceRow, controls: readonly string[], leafIndex: number): Record<string, unknown> {
  return { record_id: row.record_id, record_type: row.record_type, mapped_controls: controls, detail: 'ok', ledger_index: leafIndex };
}

/** The result an attestation's idempotency key is remembered with (and replayed as). */
export function attestationResult(row: AttestationRow, leafIndex: number): Record<string, unknown> {
  return { attestation_id: row.attestation_id, external_verified: row.witness_form !== null, trust_tier: row.trust_tier, detail: 'ok', ledger_index: leafIndex };
}

/**
 * What storing one record did: stored, with its leaf in the transparency log, or nothing stored
 * because its idempotency key already stood for a write (`hit`).
 */
export type Stored = { hit: null; leafIndex: number } | { hit: IdempotencyHit; leafIndex?: undefined };

/** When a record counts from: back-dating helps, future-dating cannot inflate freshness. */
export function countsFromMs(claimedMs: number, receivedMs: number): number {
  return Math.min(claimedMs, receivedMs);
}

/** Tuning a test may change. */
export interface StoreOptions {
  /** see LIST_INDEX_BATCH in evidence.ts */
  listIndexBatch?: number;
  /** the transparency log's key and origin (store/ledger.ts); without a key no checkpoint is signed */
  ledger?: LedgerOptions;
}

export class Store {
  readonly writer: GroupCommitWriter;
  readonly identity: IdentityStore;
  readonly evidence: EvidenceStore;
  readonly attestations: AttestationStore;
  readonly coverage: CoverageStore;
  readonly systems: SystemStore;
  readonly gatePolicy: GatePolicyStore;
  readonly ledger: LedgerStore;
  readonly idempotency: IdempotencyStore;

  constructor(
    readonly db: Db,
    options: StoreOptions = {},
  ) {
    this.identity = new IdentityStore(db);
    this.evidence = new EvidenceStore(db, options.listIndexBatch);
    this.attestations = new AttestationStore(db);
    this.coverage = new CoverageStore(db);
    this.systems = new SystemStore(db);
    this.ledger = new LedgerStore(db, options.ledger);
    this.idempotency = new IdempotencyStore(db);
    const { coverage, systems, evidence, ledger } = this;
    // Coverage is written once per control and systems once per system per group commit (the
    // latest time wins either way); the list tables' entries a batch at a time.
    this.writer = new GroupCommitWriter(db, {
      begin: () => {
        ledger.beginGroup();
        coverage.discard();
        systems.discard();
      },
      end: () => {
        systems.flush();
        coverage.flush();
        evidence.indexPendingLists();
      },
    });
    this.gatePolicy = new GatePolicyStore(db);
    // New record ids sort after the last stored one (ids.ts): the list's tie order needs it.
    const lastRecordId = db.prepare<[], string>('SELECT record_id FROM evidence ORDER BY seq DESC LIMIT 1').pluck().get();
    if (lastRecordId !== undefined) uuidv7After(lastRecordId);
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
        if (outcomes[i]!.hit === null) this.#deferDerived(write);
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
    this.evidence.insert(row);
    const leafIndex = this.ledger.appendEvidence(row);
    if (claim !== undefined) this.idempotency.remember(row.workspace_id, claim, evidenceResult(row, write.controls, leafIndex), row.received_ms);
    return { hit: null, leafIndex };
  }

  /** Systems and coverage of a stored record: written by the group's end, so deferred only once its insert has succeeded. */
  #deferDerived(write: EvidenceWrite): void {
    const { row } = write;
    const earnedMs = countsFromMs(row.occurred_ms, row.received_ms);
    this.systems.defer({
      workspaceId: row.workspace_id,
      name: row.system_name,
      evidenceMs: earnedMs,
      ...(write.riskTier !== undefined ? { risk: { tier: write.riskTier, atMs: row.occurred_ms } } : {}),
      record: { type: row.record_type, controls: write.controls },
    });
    this.coverage.defer(row.workspace_id, write.controls, earnedMs);
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
        if (!this.attestations.insert(row)) return null;
        const leafIndex = this.ledger.appendAttestation(row);
        if (claim !== undefined) this.idempotency.remember(row.workspace_id, claim, attestationResult(row, leafIndex), row.received_ms);
        return { hit: null, leafIndex };
      });
      // last, once every insert has succeeded: one systems update per system of the group
      for (const [i, row] of rows.entries()) {
        if (outcomes[i] === null || outcomes[i]!.hit !== null) continue;
        const countsFrom = countsFromMs(row.executed_ms, row.received_ms);
        this.systems.defer({ workspaceId: row.workspace_id, name: row.system_name, evidenceMs: countsFrom, attestedMs: countsFrom });
      }
      return outcomes;
    });
  }

  /** Commits queued writes and closes the database. */
  async close(): Promise<void> {
    await this.writer.close();
    if (this.db.open) this.ledger.close();
    if (this.db.open) this.db.close();
  }
}

/** Opens (creating and migrating as needed) the store at `path` (`:memory:` for a throw-away one). */
export function openStore(path: string, options: StoreOptions = {}): Store {
  return new Store(openDatabase(path), options);
}
