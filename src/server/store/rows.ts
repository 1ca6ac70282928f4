/**
 * The rows and queries the store interface (store.ts) speaks in: their one home, shared by every
 * backend (a backend imports them from here, never from another backend's folder). Field names
 * in snake_case are those of the wire and of the SQL tables; a backend maps its own column types
 * (e.g. PostgreSQL's bigint and bytea) to these.
 */
import type { WitnessForm } from '../../core/index.js';
import type { SignatureFacts } from './record-views.js';

// ---- Evidence records (spec §2.2, §2.4) --------------------------------------------------------

/** A stored evidence record, as it sits in the table. */
export interface EvidenceRow {
  record_id: string;
  workspace_id: string;
  record_type: string;
  system_name: string;
  identity: string | null;
  resource: string | null;
  environment: string | null;
  /** as sent (or the time of ingest when it was not) */
  occurred_at: string;
  occurred_ms: number;
  /** canonical JSON text of the payload */
  payload: string;
  client_sig: string | null;
  client_sig_algo: string | null;
  source: string;
  /** JSON array text of control ids */
  mapped_controls: string;
  received_at: string;
  received_ms: number;
}

/**
 * The evidence table's columns in the order every backend inserts them: the row's fields, with the
 * workspace's integer key (`ws_key`, which the row does not carry) after its id.
 */
export const EVIDENCE_INSERT_COLUMNS = [
  'record_id',
  'workspace_id',
  'ws_key',
  'record_type',
  'system_name',
  'identity',
  'resource',
  'environment',
  'occurred_at',
  'occurred_ms',
  'payload',
  'client_sig',
  'client_sig_algo',
  'source',
  'mapped_controls',
  'received_at',
  'received_ms',
] as const satisfies readonly (keyof EvidenceRow | 'ws_key')[];

/** A row's values in {@link EVIDENCE_INSERT_COLUMNS} order. */
export function evidenceInsertValues(row: EvidenceRow, wsKey: number): unknown[] {
  return EVIDENCE_INSERT_COLUMNS.map((column) => (column === 'ws_key' ? wsKey : row[column]));
}

/** A record as listed (spec §2.4). */
export interface EvidenceListItem {
  record_id: string;
  record_type: string;
  system_name: string;
  occurred_at: string;
  mapped_controls: string[];
  source: string;
  signed: boolean;
}

/** A listed record's row as both backends read it (`signed` as SQLite's 0/1 or PostgreSQL's boolean). */
export interface EvidenceListRow {
  record_id: string;
  record_type: string;
  system_name: string;
  occurred_at: string;
  occurred_ms: number;
  /** JSON array text */
  mapped_controls: string;
  source: string;
  signed: number | boolean;
}

/**
 * A page of the evidence list from up to `limit + 1` rows in list order: the extra row only says
 * that there is a next page, which continues after the page's last record.
 */
export function evidenceListPage(rows: readonly EvidenceListRow[], limit: number): { records: EvidenceListItem[]; next: ListPosition | null } {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return {
    records: page.map((row) => ({
      record_id: row.record_id,
      record_type: row.record_type,
      system_name: row.system_name,
      occurred_at: row.occurred_at,
      mapped_controls: JSON.parse(row.mapped_controls) as string[],
      source: row.source,
      signed: row.signed === true || row.signed === 1,
    })),
    next: more && last ? { occurredMs: last.occurred_ms, recordId: last.record_id } : null,
  };
}

/** Where a page ends: the sort key of its last record. */
export interface ListPosition {
  occurredMs: number;
  recordId: string;
}

export interface EvidenceListQuery {
  workspaceId: string;
  systemName?: string;
  recordType?: string;
  /** records with occurred_ms at or after this */
  sinceMs: number;
  limit: number;
  /** continue after this record (exclusive), where it stands in the order as stored */
  afterRecordId?: string;
}

/** What an export reads (the export extension): records in the order stored, after a position. */
export interface ExportQuery {
  workspaceId: string;
  systemName?: string;
  recordType?: string;
  /** records with occurred_ms at or after this */
  sinceMs?: number;
  /** records with occurred_ms before this */
  untilMs?: number;
  /** continue after this stored position (seq); 0 from the start */
  afterSeq: number;
  limit: number;
}

/** A stored record with its position in the order stored. */
export type ExportRow = EvidenceRow & { seq: number };

// ---- Attestations (spec §2.5) ------------------------------------------------------------------

/** Trust tiers the write endpoints answer with (spec §2.7, wire.md §4). */
export type TrustTier = 'witnessed' | 'declared';

/**
 * Why a verified signature earned only `declared` (docs/security.md): the workspace's policy is
 * `registered` and the key is not registered, or revoked, or the signature is in the legacy form.
 */
export type TierReason = 'unregistered_key' | 'revoked_key' | 'legacy_form';

export interface AttestationRow {
  attestation_id: string;
  workspace_id: string;
  system_name: string;
  agent_name: string;
  tool_name: string;
  input_hash: string;
  output_hash: string;
  /** as sent (or the time of ingest when it was not) */
  executed_at: string;
  executed_ms: number;
  /** canonical JSON text of the attestation as sent */
  record: string;
  witness_form: WitnessForm | null;
  /** the 64 signature bytes of a verified witness_sig; null when unsigned */
  witness_sig: Buffer | null;
  /**
   * with witness_sig: the executed_at its message covers, epoch ms, or 0 when the attestation
   * has none; null when unsigned. Leads the signature's unique index.
   */
  signed_ms: number | null;
  /** hex SHA-256 of the verifying key's bytes; null when unsigned (or stored before schema 8) */
  key_fingerprint: string | null;
  trust_tier: TrustTier;
  tier_reason: TierReason | null;
  source: string;
  received_at: string;
  received_ms: number;
  /**
   * Not a column: what the route that built the row knows of its signature, so that the log leaf's
   * digest need not read `record` back (record-views.ts, SignatureFacts). Absent on rows read back.
   */
  signature_facts?: SignatureFacts;
}

/** The attestations table's columns in the order every backend inserts them: the row's own fields. */
export const ATTESTATION_INSERT_COLUMNS = [
  'attestation_id',
  'workspace_id',
  'system_name',
  'agent_name',
  'tool_name',
  'input_hash',
  'output_hash',
  'executed_at',
  'executed_ms',
  'record',
  'witness_form',
  'witness_sig',
  'signed_ms',
  'key_fingerprint',
  'trust_tier',
  'tier_reason',
  'source',
  'received_at',
  'received_ms',
] as const satisfies readonly (keyof AttestationRow)[];

/** A row's values in {@link ATTESTATION_INSERT_COLUMNS} order. */
export function attestationInsertValues(row: AttestationRow): unknown[] {
  return ATTESTATION_INSERT_COLUMNS.map((column) => row[column]);
}

/** A stored attestation as the read endpoints return it (the record as stored text). */
export type StoredAttestationRow = Omit<AttestationRow, 'workspace_id' | 'witness_sig' | 'signed_ms' | 'input_hash' | 'output_hash' | 'agent_name'> & {
  seq: number;
};

export interface AttestationListQuery {
  workspaceId: string;
  systemName?: string;
  toolName?: string;
  /** executed_ms at or after */
  sinceMs: number;
  /** executed_ms before */
  untilMs: number;
  limit: number;
  /** continue after this attestation (exclusive), where it stands in the order as stored */
  afterId?: string;
}

// ---- Identity: organisations, workspaces, users, API keys (spec §5) ----------------------------

export interface ProvisionOptions {
  /** default `default` */
  orgName?: string;
  /** default `default` */
  workspaceName?: string;
  /** the first user's e-mail; default none */
  userEmail?: string;
}

/** What `provision` creates; `api_key` is shown this once. */
export interface Provisioned {
  org_id: string;
  workspace_id: string;
  user_id: string;
  api_key: string;
}

/**
 * What a key may do in its workspace (docs/security.md, "API key roles"): a `reader` reads
 * everything and writes nothing; a `writer` also writes records, attestations and cosignatures; an
 * `admin` also changes the gate policy. Keys made before roles existed are writers.
 */
export const API_KEY_ROLES = ['reader', 'writer', 'admin'] as const;
export type ApiKeyRole = (typeof API_KEY_ROLES)[number];

/** An API key as listed: never the key, only its first characters. */
export interface ApiKeyInfo {
  key_id: string;
  role: ApiKeyRole;
  /** `gk_` and the next 8 characters of the key */
  prefix: string;
  workspace_id: string;
  user_id: string;
  name: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  revoked: boolean;
}

/** Epoch ms as the listings write times, or null. */
export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

export interface CreatedApiKey extends ApiKeyInfo {
  /** the key itself, shown this once */
  api_key: string;
}

/** Who a request is, once its key checks out. */
export interface AuthContext {
  keyId: string;
  role: ApiKeyRole;
  workspaceId: string;
  userId: string;
  orgId: string;
}

// ---- Verifying keys and the key policy (docs/security.md) --------------------------------------

export const KEY_POLICIES = ['open', 'registered'] as const;
export type KeyPolicy = (typeof KEY_POLICIES)[number];

/** A registered key as listed. */
export interface SigningKeyInfo {
  workspace_id: string;
  /** hex SHA-256 of the 32 public-key bytes */
  fingerprint: string;
  /** lower-case hex */
  public_key: string;
  name: string | null;
  created_at: string;
  revoked_at: string | null;
}

/** A registered key's row as both backends store it. */
export interface SigningKeyRow {
  workspace_id: string;
  fingerprint: string;
  public_key: string;
  name: string | null;
  created_ms: number;
  revoked_ms: number | null;
}

export function signingKeyInfo(row: SigningKeyRow): SigningKeyInfo {
  return {
    workspace_id: row.workspace_id,
    fingerprint: row.fingerprint,
    public_key: row.public_key,
    name: row.name,
    created_at: new Date(row.created_ms).toISOString(),
    revoked_at: isoOrNull(row.revoked_ms),
  };
}

// ---- AI systems (spec §2.9) --------------------------------------------------------------------

export interface SystemRow {
  system_id: string;
  name: string;
  registered: number;
  risk_tier: string | null;
  last_evidence_ms: number;
  last_attested_ms: number | null;
  /** evidence records that name the system */
  record_count: number;
  /** JSON array text: the distinct record types of those records, sorted */
  record_types: string;
  /** JSON array text: every control those records earned, sorted */
  controls: string;
}

// ---- Idempotency keys (docs/service.md "Idempotency") ------------------------------------------

/** A key and the hash of the content it came with. */
export interface IdempotencyClaim {
  key: string;
  /** see {@link contentHash} */
  hash: string;
}

/** What a key already stands for: the same content (its result), or other content. */
export type IdempotencyHit = { kind: 'replay'; result: Record<string, unknown> } | { kind: 'conflict' };

// ---- The transparency log (docs/ledger.md) -----------------------------------------------------

/** An inclusion proof as the endpoint returns it. */
export interface InclusionAnswer {
  id: string;
  leaf_index: number;
  tree_size: number;
  entry: string;
  hashes: string[];
}

/** A witness registered for a workspace's log. */
export interface WitnessInfo {
  workspace_id: string;
  name: string;
  verifier_key: string;
  added_at: string;
  revoked_at: string | null;
}

/** A witness's row as both backends read it (with its workspace's id). */
export interface WitnessRow {
  workspace_id: string;
  name: string;
  vkey: string;
  added_ms: number;
  revoked_ms: number | null;
}

export function witnessInfo(row: WitnessRow): WitnessInfo {
  return {
    workspace_id: row.workspace_id,
    name: row.name,
    verifier_key: row.vkey,
    added_at: new Date(row.added_ms).toISOString(),
    revoked_at: isoOrNull(row.revoked_ms),
  };
}
