/**
 * The service's reply bodies as they travel (snake_case, spec §2 and §4). Bodies are read with the
 * lossless JSON reader, so a number written with a fraction (`85.0`) arrives as a `JsonFloat` and
 * an integer beyond 2^53 as a `bigint`; the integer fields typed `number` here are small integers.
 */
import type { JsonValue } from '../core/canonical-json.js';
import type { RecordType } from '../core/records/types.js';
import type { Gate as ScoredGate } from '../core/controls/gates.js';

/** GET /api/me (spec §2.1). */
export interface Identity {
  user_id: string;
  workspace_id: string;
  org_id: string;
}

/** POST grc/evidence (spec §2.3). `record_id` is the nil UUID and `detail` `dry_run` in a dry run. */
export interface GrcWriteResult {
  record_id: string;
  record_type: RecordType;
  mapped_controls: string[];
  detail: string;
  /** govctl's service: the write's idempotency key was used already, with the same content; this is that write's result and nothing was stored */
  replayed?: boolean;
}

/** One item of GET grc/evidence (spec §2.4). */
export interface EvidenceListItem {
  record_id: string;
  record_type: RecordType;
  system_name: string;
  occurred_at: string;
  mapped_controls: string[];
  source: string;
  signed: boolean;
  [extension: string]: JsonValue;
}

/** GET grc/evidence; `next_cursor` is the service's paging extension (wire.md §5), `total` its count of every match. */
export interface EvidenceList {
  records: EvidenceListItem[];
  total?: number;
  next_cursor?: string | null;
}

/** Query of GET grc/evidence/export (extension). */
export interface EvidenceExportQuery {
  system_name?: string;
  record_type?: string;
  /** ISO 8601: records that occurred at or after */
  since?: string;
  /** ISO 8601: records that occurred before */
  until?: string;
  /** continue after this record (the record_id of the last line received) */
  after?: string;
  /** at most this many records */
  limit?: number;
}

/** One item of POST grc/evidence/batch: `accepted` (with the record's id) or `rejected` (with why). */
export interface EvidenceBatchItemResult {
  index: number;
  status: string;
  record_id?: string;
  record_type?: string;
  mapped_controls?: string[];
  /** the item's key was already used with the same content: this is the first write's result */
  replayed?: boolean;
  error?: string;
  message?: string;
  field?: string;
  reason?: string;
  [extension: string]: JsonValue | undefined;
}

/** POST grc/evidence/batch (extension). */
export interface EvidenceBatchResultBody {
  accepted: number;
  rejected: number;
  replayed?: number;
  results: EvidenceBatchItemResult[];
}

/** Query of GET grc/evidence (spec §4.3). */
export interface EvidenceQuery {
  system_name?: string;
  record_type?: string;
  /** lookback in days (service default 90) */
  days?: number;
  /** ISO 8601 lower bound of occurred_at (extension; instead of days) */
  since?: string;
  /** page size (service default 50, max 200) */
  limit?: number;
  /** `next_cursor` of the previous page */
  cursor?: string;
}

/**
 * GET grc/evidence/{record_id} (the service's extension): the whole stored record, with the
 * signed members exactly as stored so that `client_sig` can be checked again.
 */
export interface StoredEvidenceRecord {
  record_id: string;
  record_type: RecordType;
  system_name: string;
  payload: { [key: string]: JsonValue };
  occurred_at: string;
  identity?: string;
  resource?: string;
  environment?: string;
  client_sig?: string;
  client_sig_algo?: string;
  mapped_controls?: string[];
  [extension: string]: JsonValue | undefined;
}

/** Trust tiers: both value sets of spec §2.7 are accepted. */
export type TrustTier = 'witnessed' | 'declared' | 'verified' | 'attested' | 'observed';

/** POST attestations/external (spec §2.6). */
export interface AttestationResultBody {
  attestation_id: string;
  external_verified: boolean;
  trust_tier: TrustTier;
  detail: string;
}

/** Query of GET attestations (the service's extension); newest first. */
export interface AttestationQuery {
  system_name?: string;
  tool_name?: string;
  /** ISO 8601: executed at or after (instead of `days`) */
  since?: string;
  /** ISO 8601: executed before */
  until?: string;
  /** lookback in days (service default 90) */
  days?: number;
  /** page size (service default 50, max 200) */
  limit?: number;
  /** `next_cursor` of the previous page */
  cursor?: string;
}

/**
 * A stored attestation (GET attestations, GET attestations/{attestation_id}): the record exactly
 * as stored (its canonical text, numbers lossless), and `signed_text`, the exact text its
 * `witness_sig` was verified over, recomputed from the stored record (null when unsigned).
 */
export interface StoredAttestation {
  attestation_id: string;
  system_name: string;
  tool_name: string;
  executed_at: string;
  record: { [key: string]: JsonValue };
  signed_text: string | null;
  witness_sig: string | null;
  verifying_key_hex: string | null;
  witness_form: 'canonical' | 'legacy' | null;
  /** hex SHA-256 of the 32 public-key bytes */
  key_fingerprint: string | null;
  trust_tier: TrustTier;
  /** `ok`, or why a verified signature earned only `declared` */
  detail: string;
  source: string;
  received_at: string;
  [extension: string]: JsonValue | undefined;
}

/** GET attestations. */
export interface AttestationList {
  attestations: StoredAttestation[];
  next_cursor?: string | null;
}

/** One item of a batch reply; `status` is `accepted` for a stored item (spec §4.5). */
export interface BatchItemResult {
  status: string;
  attestation_id?: string;
  error?: string;
  message?: string;
  field?: string;
  [extension: string]: JsonValue | undefined;
}

/** POST attestations/batch (spec §4.5). */
export interface BatchResultBody {
  accepted: number;
  rejected: number;
  results: BatchItemResult[];
}

/** GET grc/posture-brief (spec §2.8). */
export interface PostureBrief {
  overall_pct: number;
  frameworks: { framework: string; score_pct: number }[];
  failing_gates: string[];
  unattested_24h: number;
}

/** One system of GET grc/systems (spec §2.9). */
export interface SystemInfo {
  system_id: string;
  system_name: string;
  registered: boolean;
  risk_tier: string | null;
  last_evidence_at: string | null;
}

/** One gate of GET grc/gates/check (spec §2.10), as core scores it, plus any members a service adds. */
export interface Gate extends ScoredGate {
  [extension: string]: JsonValue | undefined;
}

/** GET grc/gates (the service's extension): one policy per framework, as in effect. */
export interface GatePolicyList {
  policies: {
    id: string;
    framework: string;
    mode: string;
    threshold_pct: number;
    current_pct: number;
    status: string;
    source: string;
    [extension: string]: JsonValue;
  }[];
  unconfigured_frameworks: string[];
}

/** One framework's rule in a logged gate policy. */
export interface GateRuleBody {
  mode: string;
  threshold: number;
}

/**
 * One logged change of a workspace's gate policy (docs/ledger.md, "Gate policy changes"): its
 * leaf's sha256 is that of the record's canonical JSON, as returned.
 */
export interface GatePolicyChangeBody {
  action: 'defaults' | 'set' | 'unset';
  change_id: string;
  changed_at: string;
  changed_by: string;
  framework: string | null;
  /** every framework's rule in force after the change */
  policy: Record<string, GateRuleBody>;
  workspace_id: string;
}

/** GET grc/gates/policy (the service's extension): the policy in force and every change, oldest first. */
export interface GatePolicyLog {
  policy: Record<string, GateRuleBody>;
  changes: GatePolicyChangeBody[];
}

/** Body of POST grc/derive-controls (spec §4.9). */
export interface DeriveControlsRequest {
  description: string;
  risk_tier: string;
}

/** One recommendation of POST grc/derive-controls (spec §2.11). */
export interface ControlRecommendation {
  record_type: RecordType;
  priority: string;
  controls: string[];
}
