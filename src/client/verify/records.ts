/**
 * Stored records as a verifier reads them: each read strictly (untrusted.ts), held to the members
 * the service writes, hashed as its leaf commits to (the SHA-256 of its canonical JSON), and its
 * signatures checked here with core's checks, never taken from the service's word:
 * - evidence: `client_sig` with the workspace's signing key (HMAC, so only with that key);
 * - attestations: `witness_sig` against the record's own `verifying_key_hex` (or keys an auditor
 *   pins), and the service's claims about it (form, signed text, fingerprint, trust tier).
 * - gate verdicts: only the digest here (`gates verify-attestation` checks an envelope's signature).
 * `govctl evidence verify`, `govctl attest verify`, `govctl ledger prove` and `ledger audit` share these.
 */
import { canonicalize, isPlainObject, parseJsonLossless, type JsonValue } from '../../core/canonical-json.js';
import { sha256Hex } from '../../core/hashing.js';
import { keyFingerprint, verifyClientSig, verifyWitness, witnessJob, witnessSignedText, type SigningKey } from '../../core/signing/index.js';
import type { StoredAttestation } from '../wire-types.js';
import { readJson, shapeProblem, type Shape } from './untrusted.js';

/** The members of a stored evidence record (GET grc/evidence/{id}, each line of the export). */
export const EVIDENCE_SHAPE: Shape = {
  required: ['record_id', 'record_type', 'system_name', 'occurred_at', 'payload', 'source', 'signed', 'mapped_controls', 'received_at'],
  optional: ['identity', 'resource', 'environment', 'client_sig', 'client_sig_algo'],
};

/** The members of a stored attestation (GET attestations/{id}, each item of the list). */
export const ATTESTATION_SHAPE: Shape = {
  required: [
    'attestation_id',
    'system_name',
    'tool_name',
    'executed_at',
    'record',
    'signed_text',
    'witness_sig',
    'verifying_key_hex',
    'witness_form',
    'key_fingerprint',
    'trust_tier',
    'detail',
    'source',
    'received_at',
  ],
};

/** The members of a logged gate policy change (each of `changes` in GET grc/gates/policy). */
export const POLICY_CHANGE_SHAPE: Shape = {
  required: ['action', 'change_id', 'changed_at', 'changed_by', 'framework', 'policy', 'workspace_id'],
};

/** The members of a stored gate verdict (GET gates/verdicts/{id}, each item of the list). */
export const VERDICT_SHAPE: Shape = {
  required: ['envelope', 'exit_code', 'issued_at', 'subjects', 'verdict_id', 'workspace_id'],
};

/** The kinds of logged record (a leaf's `kind`), by the member that holds their id. */
export const RECORD_KINDS = {
  evidence: { idMember: 'record_id', shape: EVIDENCE_SHAPE },
  attestation: { idMember: 'attestation_id', shape: ATTESTATION_SHAPE },
  gate_policy: { idMember: 'change_id', shape: POLICY_CHANGE_SHAPE },
  verdict: { idMember: 'verdict_id', shape: VERDICT_SHAPE },
} as const;

export type RecordKind = keyof typeof RECORD_KINDS;

/** A stored record read, or why it is not one the service writes (its id when that much could be read). */
export type ReadRecord = { id: string; record: Record<string, JsonValue> } | { id?: string; problem: string };

/** Reads a stored record of `kind` from a parsed value: a JSON object of exactly the members the service writes. */
export function storedRecord(value: JsonValue, kind: RecordKind): ReadRecord {
  const { idMember, shape } = RECORD_KINDS[kind];
  if (!isPlainObject(value)) return { problem: 'not a JSON object' };
  const id = typeof value[idMember] === 'string' ? value[idMember] : undefined;
  if (id === undefined) return { problem: `no ${idMember}` };
  const problem = shapeProblem(value, shape);
  if (problem !== undefined) return { id, problem: `it has ${problem}` };
  return { id, record: value };
}

/** Reads a stored record of `kind` from text (strictly: no duplicate or `__proto__` member). */
export function readStoredRecord(text: string, kind: RecordKind): ReadRecord {
  const read = readJson(text);
  if ('problem' in read) return { ...idForNaming(text, kind), problem: read.problem };
  return storedRecord(read.value, kind);
}

/**
 * The id of a text that is not a record the service writes, read leniently only to name it (and
 * its leaf) in the discrepancy: nothing else is taken from such a text.
 */
function idForNaming(text: string, kind: RecordKind): { id?: string } {
  try {
    const value = parseJsonLossless(text);
    const id = isPlainObject(value) ? value[RECORD_KINDS[kind].idMember] : undefined;
    return typeof id === 'string' ? { id } : {};
  } catch {
    return {};
  }
}

/** The lower-case hex SHA-256 of a record's canonical JSON: what its leaf's entry commits to. */
export function recordDigest(record: Record<string, JsonValue>): string {
  return sha256Hex(canonicalize(record));
}

export type VerifyStatus = 'valid' | 'invalid' | 'unsigned';

/** One record's signature outcome. */
export interface VerifyResult {
  /** 0-based position in the input (or in the listing, for stored records) */
  index: number;
  status: VerifyStatus;
  record_type?: string;
  system_name?: string;
  /** a stored record's id */
  record_id?: string;
  /** a stored attestation's id */
  attestation_id?: string;
  /** attestations: the tool */
  tool_name?: string;
  /** attestations: which message form verified (`canonical` or `legacy`) */
  form?: string;
  /** why it does not verify, when more can be said than "invalid" */
  reason?: string;
}

/** Checks an evidence record's `client_sig` with the workspace's signing key; anything that is not a signed record object does not verify. */
export function verifyEvidenceSignature(document: unknown, index: number, workspaceId: string, key: SigningKey): VerifyResult {
  if (!isPlainObject(document)) return { index, status: 'invalid', reason: 'not a JSON object' };
  const result: VerifyResult = { index, status: 'valid' };
  if (typeof document.record_type === 'string') result.record_type = document.record_type;
  if (typeof document.system_name === 'string') result.system_name = document.system_name;
  if (typeof document.record_id === 'string') result.record_id = document.record_id;
  if (document.client_sig === undefined || document.client_sig === null) result.status = 'unsigned';
  else if (!verifyClientSig(document, workspaceId, key)) result.status = 'invalid';
  return result;
}

/** Checks an attestation's `witness_sig`; one without a signature does not verify. `trusted`: the only keys accepted (none: the record's own). */
export function verifyAttestationSignature(document: unknown, index: number, workspaceId: string, trusted: readonly string[] = []): VerifyResult {
  if (!isPlainObject(document)) return { index, status: 'invalid', reason: 'not a JSON object' };
  const result: VerifyResult = { index, status: 'valid' };
  if (typeof document.tool_name === 'string') result.tool_name = document.tool_name;
  if (typeof document.system_name === 'string') result.system_name = document.system_name;
  if (document.witness_sig === undefined || document.witness_sig === null) {
    result.status = 'unsigned';
    return result;
  }
  const key = typeof document.verifying_key_hex === 'string' ? document.verifying_key_hex.toLowerCase() : '';
  if (trusted.length > 0 && !trusted.includes(key)) {
    result.status = 'invalid';
    result.reason = 'signed by a key not given with --public-key';
    return result;
  }
  const form = verifyWitness(document, workspaceId);
  if (form === null) result.status = 'invalid';
  else result.form = form;
  return result;
}

/**
 * Checks an attestation as the service holds it: the stored record with core's check, then the
 * service's claims about it (form, signed text, fingerprint, trust tier) against what that check found.
 */
export function verifyStoredAttestation(stored: StoredAttestation, index: number, workspaceId: string, trusted: readonly string[] = []): VerifyResult {
  const result = verifyAttestationSignature(stored.record, index, workspaceId, trusted);
  result.tool_name = stored.tool_name;
  result.system_name = stored.system_name;
  result.attestation_id = stored.attestation_id;
  const fail = (reason: string) => {
    result.status = 'invalid';
    result.reason = reason;
    return result;
  };
  if (!isPlainObject(stored.record)) return fail('it carries no attestation record');
  if (result.status === 'unsigned') return stored.trust_tier === 'witnessed' ? fail('witnessed without a signature') : result;
  if (result.status !== 'valid') return result.reason ? result : fail('the signature does not verify over the stored record');
  if (result.form !== stored.witness_form) return fail(`the service says form ${String(stored.witness_form)}, the record verifies as ${String(result.form)}`);
  const job = witnessJob(stored.record, workspaceId);
  if (job === null || witnessSignedText(job, result.form) !== stored.signed_text) return fail('signed_text is not the text the record signs');
  if (stored.key_fingerprint !== keyFingerprint(job.publicKey)) return fail('key_fingerprint is not the SHA-256 of verifying_key_hex');
  // A signature that verifies earns `witnessed` unless the service says why not (its key policy).
  if (stored.trust_tier !== 'witnessed' && stored.detail === 'ok')
    return fail(`it is ${String(stored.trust_tier)} with detail "ok", which its verified signature does not support`);
  return result;
}
