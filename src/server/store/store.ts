/**
 * The store interface: everything the routes, the auth hook, the embedded local store and the
 * admin commands ask of a database, and nothing about which database it is. The SQLite backend
 * (store/sqlite/) and the PostgreSQL backend (store/postgres/) each implement it; a third backend
 * is one new folder beside them (docs/architecture.md, "The store").
 *
 * Every method is asynchronous, so that a backend across a network fits the same shape as the
 * embedded one. Writes of records go through the backend's group commit: a write's promise
 * resolves once the transaction holding it is durable.
 */
import type { Tile } from '../../core/index.js';
import type { GatePolicyChange, GatePolicyEdit } from '../../core/controls/policy-changes.js';
import type { AttestationListQuery, AttestationRow, StoredAttestationRow } from './rows.js';
import type { EvidenceListItem, EvidenceListQuery, EvidenceRow, ExportQuery, ExportRow, ListPosition } from './rows.js';
import type { ApiKeyInfo, ApiKeyRole, AuthContext, CreatedApiKey, ProvisionOptions, Provisioned } from './rows.js';
import type { IdempotencyClaim, IdempotencyHit, InclusionAnswer, KeyPolicy, SigningKeyInfo, SystemRow, WitnessInfo } from './rows.js';

/** An evidence record to store, with what it earns. */
export interface EvidenceWrite {
  row: EvidenceRow;
  controls: readonly string[];
  /** the risk level, when the record is an ai_risk_assessment */
  riskTier?: string;
  /** the write's idempotency key, left with its result in the same transaction */
  claim?: IdempotencyClaim;
}

/**
 * What storing one record did: stored, with its leaf in the transparency log, or nothing stored
 * because its idempotency key already stood for a write (`hit`).
 */
export type Stored = { hit: null; leafIndex: number } | { hit: IdempotencyHit; leafIndex?: undefined };

/** A workspace's request and record budget in the current window (shared by every replica of a backend). */
export interface BudgetState {
  exceeded: boolean;
  remaining: number;
  resetSeconds: number;
}

export interface IdentityStore {
  /** Creates an organisation, a workspace, a user and the first API key. */
  provision(options: ProvisionOptions, nowMs: number): Promise<Provisioned>;
  /** null: no such workspace */
  createApiKey(workspaceId: string, name: string | null, expiresMs: number | null, nowMs: number, role?: ApiKeyRole): Promise<CreatedApiKey | null>;
  listApiKeys(workspaceId?: string): Promise<ApiKeyInfo[]>;
  /** null: no such key. Applies to the next request at every replica. */
  revokeApiKey(keyId: string, nowMs: number): Promise<ApiKeyInfo | null>;
  workspaceExists(workspaceId: string): Promise<boolean>;
  /** Every workspace's id, in the order they were created (the log verifier keys of `govctl admin`). */
  workspaceIds(): Promise<string[]>;
  /** null: unknown, revoked or expired key */
  authenticate(apiKey: string, nowMs: number): Promise<AuthContext | null>;
}

/**
 * What the auth hook asks of the store for each request, answered in one step (on PostgreSQL one
 * statement for the requests that arrive together, docs/decisions.md "Requests admitted in batches"): the key checked, then,
 * only for a valid key of the workspace the path names, one request counted and the records the
 * request carries charged.
 */
export interface AdmitQuery {
  apiKey: string;
  /** the clock a key's expiry is judged by */
  nowMs: number;
  /** the workspace the request's path names, if it names one: a key of another workspace counts nothing */
  pathWorkspaceId?: string;
  /** the budgets' clock */
  budgetNowMs: number;
  maxRequests: number;
  /** records the request carries (its route says so), charged with it; 0 for none */
  records: number;
  maxRecords: number;
}

/** What {@link Store.admit} found and counted. */
export type Admission =
  /** unknown, revoked or expired key: nothing counted */
  | { auth: null }
  /** a valid key of another workspace than the path's: nothing counted */
  | { auth: AuthContext; counted: false }
  /**
   * counted: `records` is null when none were asked for or the request was over its budget
   * (then nothing was charged); a record charge over the budget is refused whole (`exceeded`).
   */
  | { auth: AuthContext; counted: true; requests: BudgetState; records: BudgetState | null };

export interface BudgetStore {
  /** Charges `n` records; a charge over `maxRecords` is refused whole and charges nothing. */
  chargeRecords(workspaceId: string, n: number, maxRecords: number, nowMs: number): Promise<BudgetState>;
}

export interface EvidenceReads {
  get(workspaceId: string, recordId: string): Promise<EvidenceRow | undefined>;
  /** null: the `afterRecordId` is not a record of the workspace */
  list(query: EvidenceListQuery): Promise<{ records: EvidenceListItem[]; next: ListPosition | null } | null>;
  count(query: Omit<EvidenceListQuery, 'limit' | 'afterRecordId'>): Promise<number>;
  exportPage(query: ExportQuery): Promise<ExportRow[]>;
  seqOf(workspaceId: string, recordId: string): Promise<number | undefined>;
}

export interface AttestationReads {
  get(workspaceId: string, attestationId: string): Promise<StoredAttestationRow | undefined>;
  /** null: the `afterId` is not an attestation of the workspace */
  list(query: AttestationListQuery): Promise<StoredAttestationRow[] | null>;
}

export interface SystemReads {
  list(workspaceId: string, nameContains?: string): Promise<SystemRow[]>;
  get(workspaceId: string, name: string): Promise<SystemRow | undefined>;
  countUnattestedSince(workspaceId: string, sinceMs: number): Promise<number>;
}

/**
 * A workspace's gate policy as logged (gate-policy-log.ts): every change is a record appended to
 * its transparency log, and the policy in force is the latest change's. A workspace with none
 * logged gets its defaults logged first, by whichever call comes first.
 */
export interface GatePolicyStore {
  /** Logs a change (with the defaults before it when none is logged); null: no such workspace. */
  change(workspaceId: string, edit: GatePolicyEdit, nowMs: number): Promise<GatePolicyChange | null>;
  /** The latest change, whose `policy` is in force. @throws when the workspace does not exist */
  latest(workspaceId: string, nowMs: number): Promise<GatePolicyChange>;
  /** Every change, oldest first. @throws when the workspace does not exist */
  changes(workspaceId: string, nowMs: number): Promise<GatePolicyChange[]>;
}

export interface SigningKeyStore {
  policy(workspaceId: string): Promise<KeyPolicy>;
  setPolicy(workspaceId: string, policy: KeyPolicy, nowMs: number): Promise<void>;
  status(workspaceId: string, fingerprint: string): Promise<'active' | 'revoked' | 'unregistered'>;
  get(workspaceId: string, fingerprint: string): Promise<SigningKeyInfo | undefined>;
  add(workspaceId: string, fingerprint: string, publicKey: string, name: string | null, nowMs: number): Promise<void>;
  revoke(workspaceId: string, fingerprint: string, nowMs: number): Promise<void>;
  list(workspaceId: string): Promise<SigningKeyInfo[]>;
}

/**
 * The transparency log (docs/ledger.md): leaves are appended by the record writes below. A read
 * that cannot be answered as asked throws LedgerQueryError (ledger/notes.ts); the tree itself is
 * core/ledger's (CompactTree, proofs from a HashReader over the stored subtrees).
 */
export interface LedgerStore {
  /** true when this store holds the log key and signs checkpoints */
  readonly signing: boolean;
  origin(workspaceId: string): string;
  /** Starts integrating pending leaves on a timer (on a backend with replicas: whichever holds the lease). */
  start(): void;
  /** Integrates pending leaves and signs checkpoints now; resolves with the leaves integrated. */
  integrate(): Promise<number>;
  size(workspaceId: string): Promise<number>;
  /** @throws LedgerQueryError `not_found` for an unknown workspace, `no_key` without a log key */
  verifierKey(workspaceId: string): Promise<string>;
  checkpoint(workspaceId: string): Promise<string>;
  inclusion(workspaceId: string, id: string, treeSize?: number): Promise<InclusionAnswer | { pending: { id: string; leaf_index: number } }>;
  consistency(workspaceId: string, from: number, to: number): Promise<{ from: number; to: number; hashes: string[] }>;
  tile(workspaceId: string, tile: Tile): Promise<Buffer | null>;
  addCosignatures(workspaceId: string, note: string): Promise<string[]>;
  /** Registers (or replaces and un-revokes) a witness's key; null: no such workspace. */
  addWitness(workspaceId: string, name: string, vkey: string, nowMs: number): Promise<WitnessInfo | null>;
  /** revoked ones included; null: no such workspace */
  listWitnesses(workspaceId?: string): Promise<WitnessInfo[] | null>;
  /** null: no such workspace or witness */
  revokeWitness(workspaceId: string, name: string, nowMs: number): Promise<WitnessInfo | null>;
}

export interface Store {
  /** `sqlite` or `postgres`: for health output and logs, never for branching above the store */
  readonly backend: string;
  readonly identity: IdentityStore;
  readonly budget: BudgetStore;
  readonly evidence: EvidenceReads;
  readonly attestations: AttestationReads;
  readonly systems: SystemReads;
  readonly gatePolicy: GatePolicyStore;
  readonly signingKeys: SigningKeyStore;
  readonly ledger: LedgerStore;
  /**
   * Checks a request's API key and counts its budgets (AdmitQuery): revocation and expiry apply to
   * the next request at every replica; counts are exact across replicas.
   */
  admit(query: AdmitQuery): Promise<Admission>;
  /** What an idempotency key already stands for, or null (checked again under the write). */
  findIdempotent(workspaceId: string, claim: IdempotencyClaim, nowMs: number): Promise<IdempotencyHit | null>;
  /** Coverage: the last time each control was earned in the workspace. */
  lastEarned(workspaceId: string): Promise<Map<string, number>>;
  /** A new record or attestation id, after every id this store has handed out or stored. */
  newId(prefix: 'rec' | 'att'): string;

  /** Stores one evidence record (its log leaf in the same transaction), coverage and systems. */
  recordEvidence(write: EvidenceWrite): Promise<Stored>;
  /** Stores evidence records in one transaction, in order; each item's outcome as recordEvidence's. */
  recordEvidenceBatch(writes: readonly EvidenceWrite[]): Promise<Stored[]>;
  /** Stores attestations; an outcome is null for a witness_sig stored already (a replay). */
  recordAttestations(rows: readonly AttestationRow[], claims?: readonly (IdempotencyClaim | undefined)[]): Promise<(Stored | null)[]>;
  /** Ready for requests (the balancer's readiness probe): the database answers. */
  ready(): Promise<boolean>;
  /** Commits queued writes and closes the database. */
  close(): Promise<void>;
}
