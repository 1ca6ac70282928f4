/**
 * `witness_sig`: Ed25519 over the canonical JSON of the attestation as sent, without
 * `witness_sig` and `verifying_key_hex`, with `workspace_id` added (docs/wire-format.md). The legacy
 * form `<input_hash>:<output_hash>:<executed_at>` is accepted on verification, and only when the
 * attestation has an `executed_at` (without one the legacy message would end in `undefined`, a
 * text any signer of those two hashes can produce). {@link witnessFormOf} is the one check: the
 * CLI's offline verify, the client library and the service's verify pool all call it.
 * Verification runs on libsodium where sodium-native loads, Node's OpenSSL elsewhere (ed25519-verifier.ts).
 */
import { createHash } from 'node:crypto';
import { canonicalize, canonicalMembers, compareKeys, type CanonicalMember } from '../canonical-json.js';
import { verifyEd25519Bytes } from './ed25519-verifier.js';
import type { SigningKey } from './keys.js';

export type WitnessForm = 'canonical' | 'legacy';

const HEX_SIG = /^[0-9a-fA-F]{128}$/;
const HEX_KEY = /^[0-9a-fA-F]{64}$/;

/** Members `witness_sig` does not cover; `workspace_id` is the workspace's, whatever the attestation says (docs/wire-format.md). */
const UNSIGNED_MEMBERS = new Set(['witness_sig', 'verifying_key_hex', 'workspace_id']);

/**
 * An attestation's canonical text as sent (what the service stores) and the canonical message its
 * `witness_sig` covers, from one canonicalisation of each member.
 * @throws CanonicalJsonError when a member cannot be written as canonical JSON
 */
export function witnessTexts(attestation: Record<string, unknown>, workspaceId: string): { stored: string; message: string } {
  const members = canonicalMembers(attestation);
  const signed = members.filter((member) => !UNSIGNED_MEMBERS.has(member.key));
  const at = signed.findIndex((member) => compareKeys(member.key, 'workspace_id') > 0);
  signed.splice(at < 0 ? signed.length : at, 0, { key: 'workspace_id', text: `"workspace_id":${canonicalize(workspaceId)}` });
  const join = (list: readonly CanonicalMember[]) => `{${list.map((member) => member.text).join(',')}}`;
  return { stored: join(members), message: join(signed) };
}

/** The canonical message `witness_sig` signs (docs/wire-format.md). */
export function witnessMessage(attestation: Record<string, unknown>, workspaceId: string): string {
  return witnessTexts(attestation, workspaceId).message;
}

/**
 * The legacy message some existing clients sign. It binds only the two hashes and the time: not
 * the workspace, system, tool, agent, model or who authorised the run (docs/security.md).
 */
export function legacyWitnessMessage(attestation: Record<string, unknown>): string {
  return `${String(attestation.input_hash)}:${String(attestation.output_hash)}:${String(attestation.executed_at)}`;
}

/** A signature to check and the messages it may sign: what the verify pool's workers are sent. */
export interface WitnessJob {
  /** the canonical message ({@link witnessMessage}) */
  canonical: string;
  /** the legacy message, or null when the attestation has no `executed_at` (never verified then) */
  legacy: string | null;
  /** hex */
  signature: string;
  /** hex */
  publicKey: string;
}

/**
 * The signature check of an attestation, or null when it carries no `witness_sig` and
 * `verifying_key_hex` strings.
 * @param canonical the canonical message when the caller has it already (the service does)
 * @throws CanonicalJsonError when the attestation cannot be written as canonical JSON
 */
export function witnessJob(attestation: Record<string, unknown>, workspaceId: string, canonical?: string): WitnessJob | null {
  const signature = attestation.witness_sig;
  const publicKey = attestation.verifying_key_hex;
  if (typeof signature !== 'string' || typeof publicKey !== 'string') return null;
  return {
    canonical: canonical ?? witnessMessage(attestation, workspaceId),
    legacy: typeof attestation.executed_at === 'string' ? legacyWitnessMessage(attestation) : null,
    signature,
    publicKey,
  };
}

/** The form a job's signature verifies under (canonical first), or null when it verifies under neither. */
export function witnessFormOf(job: WitnessJob): WitnessForm | null {
  if (verifyEd25519(job.canonical, job.signature, job.publicKey)) return 'canonical';
  if (job.legacy !== null && verifyEd25519(job.legacy, job.signature, job.publicKey)) return 'legacy';
  return null;
}

/** The message a job's signature covers under `form`. */
export function witnessSignedText(job: WitnessJob, form: WitnessForm): string | null {
  return form === 'canonical' ? job.canonical : job.legacy;
}

/** `witness_sig` and `verifying_key_hex` for an attestation, in the canonical form. */
export function signWitness(attestation: Record<string, unknown>, workspaceId: string, key: SigningKey): { witness_sig: string; verifying_key_hex: string } {
  return { witness_sig: key.ed25519SignHex(witnessMessage(attestation, workspaceId)), verifying_key_hex: key.publicKeyHex };
}

/**
 * Verifies a hex Ed25519 signature over a message (a string as its UTF-8 bytes) with a hex public
 * key, with the fastest backend available (ed25519-verifier.ts). Never throws.
 */
export function verifyEd25519(message: string | Uint8Array, signatureHex: string, publicKeyHex: string): boolean {
  if (!HEX_SIG.test(signatureHex) || !HEX_KEY.test(publicKeyHex)) return false;
  const bytes = typeof message === 'string' ? Buffer.from(message, 'utf8') : message;
  return verifyEd25519Bytes(bytes, Buffer.from(signatureHex, 'hex'), Buffer.from(publicKeyHex, 'hex'));
}

/**
 * Which message form `witness_sig` verifies under, or null when it verifies under neither
 * (or is missing or malformed).
 */
export function verifyWitness(attestation: Record<string, unknown>, workspaceId: string): WitnessForm | null {
  let job: WitnessJob | null;
  try {
    job = witnessJob(attestation, workspaceId);
  } catch {
    return null;
  }
  return job === null ? null : witnessFormOf(job);
}

/**
 * A verifying key's fingerprint: lower-case hex SHA-256 of the 32 raw public-key bytes (not of the
 * hex text), so that any tool that holds the key computes the same value (docs/security.md).
 */
export function keyFingerprint(publicKeyHex: string): string {
  return createHash('sha256').update(Buffer.from(publicKeyHex, 'hex')).digest('hex');
}
