/**
 * The complete stored record of each kind exactly as the service returns it by id — one place,
 * because the transparency log commits to these bytes: a leaf's entry carries the SHA-256 of the
 * canonical JSON of the record as built here (docs/ledger.md, "The leaf entry"). Version 1; a
 * change of members or representation is a new entry version, never an edit here.
 *
 * - evidence: the body of `GET …/grc/evidence/{record_id}`;
 * - attestation: the body of `GET …/attestations/{attestation_id}`: the attestation exactly as
 *   sent (and signed) under `record`, the text its signature covers, its key, form, fingerprint
 *   and trust tier, and what the service decided on receipt.
 */
import {
  canonicalize,
  isPlainObject,
  keyFingerprint,
  parseJsonLossless,
  witnessJob,
  witnessSignedText,
  witnessTexts,
  type WitnessForm,
  type WitnessJob,
} from '../../core/index.js';
import { sha256Hex } from '../../core/hashing.js';
import type { AttestationRow, EvidenceRow, StoredAttestationRow, TierReason } from './rows.js';

/** What the attestation view reads of a stored row (its position is not part of it). */
type AttestationView = Omit<StoredAttestationRow, 'seq'>;

/** The representation version these views write (the ledger entry version that commits to them). */
export const RECORD_VIEW_VERSION = 1;

/**
 * A JSON array of strings that need no escaping (the stored mapped_controls, ids from the
 * catalogue): its text is its canonical JSON already.
 */
const PLAIN_STRING_ARRAY = /^\[(?:"[\x20\x21\x23-\x5b\x5d-\x7e]*"(?:,"[\x20\x21\x23-\x5b\x5d-\x7e]*")*)?\]$/;

/** The canonical JSON of the stored mapped_controls (JSON array text). */
function canonicalControls(text: string): string {
  return PLAIN_STRING_ARRAY.test(text) ? text : canonicalize(parseJsonLossless(text));
}

/**
 * The stored evidence record as JSON text (GET grc/evidence/{id}, and each line of the export), the
 * payload spliced in unparsed (docs/wire-format.md), as are the mapped controls (stored as the JSON text of a
 * list of ids). Written as one template rather than through objects and JSON.stringify: an export
 * writes it for every record.
 */
export function evidenceView(row: EvidenceRow): string {
  const q = JSON.stringify;
  let text = `{"record_id":${q(row.record_id)},"record_type":${q(row.record_type)},"system_name":${q(row.system_name)}`;
  if (row.identity !== null) text += `,"identity":${q(row.identity)}`;
  if (row.resource !== null) text += `,"resource":${q(row.resource)}`;
  if (row.environment !== null) text += `,"environment":${q(row.environment)}`;
  text += `,"occurred_at":${q(row.occurred_at)},"payload":${row.payload}`;
  if (row.client_sig !== null) text += `,"client_sig":${q(row.client_sig)}`;
  if (row.client_sig_algo !== null) text += `,"client_sig_algo":${q(row.client_sig_algo)}`;
  return `${text},"source":${q(row.source)},"signed":${row.client_sig !== null},"mapped_controls":${row.mapped_controls},"received_at":${q(row.received_at)}}`;
}

/**
 * The canonical JSON of {@link evidenceView}'s record, written directly as one template in sorted
 * key order: the stored payload is already canonical text and is spliced in, as are the mapped
 * controls when their text is canonical (canonicalControls); each other member is a string, a
 * boolean or absent — no parse and no object on the write path.
 */
export function evidenceCanonical(row: EvidenceRow): string {
  const q = canonicalize;
  let text = '{';
  if (row.client_sig !== null) text += `"client_sig":${q(row.client_sig)},`;
  if (row.client_sig_algo !== null) text += `"client_sig_algo":${q(row.client_sig_algo)},`;
  if (row.environment !== null) text += `"environment":${q(row.environment)},`;
  if (row.identity !== null) text += `"identity":${q(row.identity)},`;
  text += `"mapped_controls":${canonicalControls(row.mapped_controls)},"occurred_at":${q(row.occurred_at)},"payload":${row.payload},`;
  text += `"received_at":${q(row.received_at)},"record_id":${q(row.record_id)},"record_type":${q(row.record_type)},`;
  if (row.resource !== null) text += `"resource":${q(row.resource)},`;
  return `${text}"signed":${row.client_sig !== null},"source":${q(row.source)},"system_name":${q(row.system_name)}}`;
}

/** What each {@link TierReason} tells a client in `detail`. */
export const TIER_REASONS: Record<TierReason, string> = {
  unregistered_key: 'declared: witness_sig verifies, but verifying_key_hex is not a registered key of this workspace (key policy: registered)',
  revoked_key: 'declared: witness_sig verifies, but verifying_key_hex is revoked in this workspace (key policy: registered)',
  legacy_form: 'declared: witness_sig verifies only in the legacy form, which binds neither the workspace nor the system (key policy: registered)',
};

/** The members of {@link attestationView}'s record other than `record`, split around it in canonical key order. */
interface AttestationMembers {
  /** members whose keys sort before `record` */
  before: Record<string, unknown>;
  /** members whose keys sort after `record` */
  after: Record<string, unknown>;
  /** the canonical JSON of the stored record, when it was written on the way (a signed record); else null */
  recordCanonical: string | null;
}

/**
 * What the view says of an attestation's signature. Read back from the stored record (a read, the
 * backfill), or given by the write path, which has just parsed the attestation, written its
 * canonical texts and checked its signature: reading the stored text back and canonicalising it
 * again was about half of the leaf digest's cost.
 */
export interface SignatureFacts {
  /** `witness_sig` and `verifying_key_hex` as sent, when strings; else null */
  signature: string | null;
  publicKey: string | null;
  /** the exact text the signature covers in the form it verified under (witnessSignedText); null when none */
  signedText: string | null;
}

/**
 * The facts of an attestation about to be stored, from what the route has: the attestation as sent,
 * its signature check (witnessJob, null when unsigned) and the form it verified under.
 */
export function signatureFacts(record: Record<string, unknown>, job: WitnessJob | null, form: WitnessForm | null): SignatureFacts {
  return {
    signature: typeof record.witness_sig === 'string' ? record.witness_sig : null,
    publicKey: typeof record.verifying_key_hex === 'string' ? record.verifying_key_hex : null,
    signedText: job !== null && form !== null ? witnessSignedText(job, form) : null,
  };
}

/**
 * What the view of a stored attestation says besides the record: the exact text its signature
 * covers, recomputed from the stored record (so a record altered after it was stored no longer
 * verifies), its key, fingerprint, form, tier and receipt. With `facts` (the write path: `record`
 * is the canonical text the route has just written) the stored record is not read back.
 */
function attestationMembers(row: AttestationView, workspaceId: string, facts?: SignatureFacts): AttestationMembers {
  let signature: string | null = null;
  let publicKey: string | null = null;
  let signedText: string | null = null;
  let recordCanonical: string | null = null;
  let fingerprint = row.key_fingerprint;
  if (facts !== undefined) {
    ({ signature, publicKey, signedText } = facts);
    recordCanonical = row.record;
  } else {
    try {
      const record = parseJsonLossless(row.record);
      if (isPlainObject(record)) {
        if (typeof record.witness_sig === 'string') signature = record.witness_sig;
        if (typeof record.verifying_key_hex === 'string') publicKey = record.verifying_key_hex;
        // One canonicalisation of the record's members gives both its canonical text and the message
        // its signature covers (witnessTexts), where witnessJob alone would make a second.
        const texts = signature !== null && publicKey !== null ? witnessTexts(record, workspaceId) : null;
        const job: WitnessJob | null = witnessJob(record, workspaceId, texts?.message);
        if (job !== null && row.witness_form !== null) signedText = witnessSignedText(job, row.witness_form);
        recordCanonical = texts?.stored ?? null;
      }
    } catch {
      // a stored text that no longer parses: shown as stored, with nothing signed to check
    }
  }
  if (fingerprint === null && publicKey !== null && /^[0-9a-fA-F]{64}$/.test(publicKey)) fingerprint = keyFingerprint(publicKey);
  return {
    before: {
      attestation_id: row.attestation_id,
      detail: row.tier_reason === null ? 'ok' : TIER_REASONS[row.tier_reason],
      executed_at: row.executed_at,
      key_fingerprint: fingerprint,
      received_at: row.received_at,
    },
    after: {
      signed_text: signedText,
      source: row.source,
      system_name: row.system_name,
      tool_name: row.tool_name,
      trust_tier: row.trust_tier,
      verifying_key_hex: publicKey,
      witness_form: row.witness_form,
      witness_sig: signature,
    },
    recordCanonical,
  };
}

/**
 * The stored attestation as JSON text (GET attestations/{id} and each item of the list): the
 * record spliced in as stored (canonical text, numbers as sent), with {@link attestationMembers}.
 */
export function attestationView(row: AttestationView, workspaceId: string): string {
  const { before, after } = attestationMembers(row, workspaceId);
  const head = { attestation_id: row.attestation_id, system_name: row.system_name, tool_name: row.tool_name, executed_at: row.executed_at };
  const tail: Record<string, unknown> = {
    signed_text: after.signed_text,
    witness_sig: after.witness_sig,
    verifying_key_hex: after.verifying_key_hex,
    witness_form: row.witness_form,
    key_fingerprint: before.key_fingerprint,
    trust_tier: row.trust_tier,
    detail: before.detail,
    source: row.source,
    received_at: row.received_at,
  };
  return `${JSON.stringify(head).slice(0, -1)},"record":${row.record},${JSON.stringify(tail).slice(1)}`;
}

/**
 * The canonical JSON of {@link attestationView}'s record (read losslessly, so numbers keep their
 * form), written directly: the members other than `record` canonicalised as they are, and the
 * record's canonical text at its sorted place (between `received_at` and `signed_text`) — the view
 * is never written as text, parsed back and canonicalised whole.
 * @throws CanonicalJsonError or JsonSyntaxError when the stored record cannot be read or written canonically
 */
export function attestationCanonical(row: AttestationView, workspaceId: string, facts?: SignatureFacts): string {
  const { before, after, recordCanonical } = attestationMembers(row, workspaceId, facts);
  const record = recordCanonical ?? canonicalize(parseJsonLossless(row.record));
  return `${canonicalize(before).slice(0, -1)},"record":${record},${canonicalize(after).slice(1)}`;
}

/** The SHA-256 (hex) a ledger entry commits to for a stored evidence record. */
export function evidenceSha256(row: EvidenceRow): string {
  return sha256Hex(evidenceCanonical(row));
}

/**
 * The SHA-256 (hex) a ledger entry commits to for a stored attestation: of the canonical JSON of
 * {@link attestationView}'s record (read losslessly, so numbers keep their form). A row the route
 * has just built carries its {@link SignatureFacts} (`signature_facts`), which spare reading its
 * record back.
 */
export function attestationSha256(row: AttestationRow): string {
  return sha256Hex(attestationCanonical(row, row.workspace_id, row.signature_facts));
}
