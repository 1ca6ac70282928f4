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
import { SystemStore } from './systems.js';
import { GroupCommitWriter } from './writer.js';

export type { Db } from './database.js';
export type { EvidenceRow, EvidenceListItem, ListPosition } from './evidence.js';
export type { AttestationRow, StoredAttestationRow, TierReason, TrustTier } from './attestations.js';
export { SigningKeyStore, KEY_POLICIES, type KeyPolicy, type SigningKeyInfo } from './signing-keys.js';
export type { ApiKeyInfo, AuthContext, CreatedApiKey, ProvisionOptions, Provisioned } from './identity.js';
export type { SystemRow } from './systems.js';

/** An evidence record to store, with what it earns. */
export interface EvidenceWrite {
  row: EvidenceRow;
  controls: readonly string[];
  /** the risk level, when the record is an ai_risk_assessment */
  riskTier?: string;
}

/** When a record counts from: back-dating helps, future-dating cannot inflate freshness. */
export function countsFromMs(claimedMs: number, receivedMs: number): number {
  return Math.min(claimedMs, receivedMs);
}

/** Tuning a test may change. */
export interface StoreOptions {
  /** see LIST_INDEX_BATCH in evidence.ts */
  listIndexBatch?: number;
}

export class Store {
  readonly writer: GroupCommitWriter;
  readonly identity: IdentityStore;
  readonly evidence: EvidenceStore;
  readonly attestations: AttestationStore;
  readonly coverage: CoverageStore;
  readonly systems: SystemStore;
  readonly gatePolicy: GatePolicyStore;

  constructor(
    readonly db: Db,
    options: StoreOptions = {},
  ) {
    this.identity = new IdentityStore(db);
    this.evidence = new EvidenceStore(db, options.listIndexBatch);
    this.attestations = new AttestationStore(db);
    this.coverage = new CoverageStore(db);
    this.systems = new SystemStore(db);
    const { coverage, systems, evidence } = this;
    // Coverage is written once per control and systems once per system per group commit (the
    // latest time wins either way); the list tables' entries a batch at a time.
    this.writer = new GroupCommitWriter(db, {
      begin: () => {
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

  /** Stores one evidence record and updates coverage and systems; resolves after the commit. */
  recordEvidence(write: EvidenceWrite): Promise<void> {
    const { row } = write;
    const earnedMs = countsFromMs(row.occurred_ms, row.received_ms);
    return this.writer.write(() => {
      this.evidence.insert(row);
      // last, once the insert has succeeded: written by the group's end
      this.systems.defer({
        workspaceId: row.workspace_id,
        name: row.system_name,
        evidenceMs: earnedMs,
        ...(write.riskTier !== undefined ? { risk: { tier: write.riskTier, atMs: row.occurred_ms } } : {}),
      });
      this.coverage.defer(row.workspace_id, write.controls, earnedMs);
    });
  }

  /**
   * Stores attestations and updates systems; resolves after the commit with, for each row, whether
   * it was stored: false when its witness_sig is stored already (a replay, also of an earlier row
   * of the same call), which stores nothing for that row.
   */
  recordAttestations(rows: readonly AttestationRow[]): Promise<boolean[]> {
    return this.writer.write(() => {
      const stored = rows.map((row) => this.attestations.insert(row));
      // last, once every insert has succeeded: one systems update per system of the group
      rows.forEach((row, i) => {
        if (!stored[i]) return;
        const countsFrom = countsFromMs(row.executed_ms, row.received_ms);
        this.systems.defer({ workspaceId: row.workspace_id, name: row.system_name, evidenceMs: countsFrom, attestedMs: countsFrom });
      });
      return stored;
    });
  }

  /** Commits queued writes and closes the database. */
  async close(): Promise<void> {
    await this.writer.close();
    if (this.db.open) this.db.close();
  }
}

/** Opens (creating and migrating as needed) the store at `path` (`:memory:` for a throw-away one). */
export function openStore(path: string, options: StoreOptions = {}): Store {
  return new Store(openDatabase(path), options);
}
