/**
 * `witness_sig`: Ed25519 over the canonical JSON of the attestation as sent, without
 * `witness_sig` and `verifying_key_hex`, with `workspace_id` added (wire.md §4). The legacy
 * form `<input_hash>:<output_hash>:<executed_at>` is accepted on verification.
 * Verification runs on libsodium where sodium-native loads, Node's OpenSSL elsewhere (ed25519-verifier.ts).
 */
import { canonicalize, canonicalMembers, compareKeys, type CanonicalMember } from '../canonical-json.js';
import { verifyEd25519Bytes } from './ed25519-verifier.js';
import type { SigningKey } from './keys.js';

export type WitnessForm = 'canonical' | 'legacy';

const HEX_SIG = /^[0-9a-fA-F]{128}$/;
const HEX_KEY = /^[0-9a-fA-F]{64}$/;

/** Members `witness_sig` does not cover; `workspace_id` is the workspace's, whatever the attestation says (wire.md §4). */
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

/** The canonical message `witness_sig` signs (wire.md §4). */
export function witnessMessage(attestation: Record<string, unknown>, workspaceId: string): string {
  return witnessTexts(attestation, workspaceId).message;
}

/** The legacy message some existing clients sign. */
export function legacyWitnessMessage(attestation: Record<string, unknown>): string {
  return `${String(attestation.input_hash)}:${String(attestation.output_hash)}:${String(attestation.executed_at)}`;
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
  const sig = attestation.witness_sig;
  const publicKey = attestation.verifying_key_hex;
  if (typeof sig !== 'string' || typeof publicKey !== 'string') return null;
  let canonical: string;
  try {
    canonical = witnessMessage(attestation, workspaceId);
  } catch {
    return null;
  }
  if (verifyEd25519(canonical, sig, publicKey)) return 'canonical';
  if (verifyEd25519(legacyWitnessMessage(attestation), sig, publicKey)) return 'legacy';
  return null;
}
