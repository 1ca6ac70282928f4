/**
 * `witness_sig`: Ed25519 over the canonical JSON of the attestation as sent, without
 * `witness_sig` and `verifying_key_hex`, with `workspace_id` added (wire.md §4). The legacy
 * form `<input_hash>:<output_hash>:<executed_at>` is accepted on verification.
 * Uses Node's OpenSSL Ed25519, the fastest correct implementation available here.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { canonicalize } from '../canonical-json.js';
import { SPKI_ED25519_PREFIX, type SigningKey } from './keys.js';

export type WitnessForm = 'canonical' | 'legacy';

const HEX_SIG = /^[0-9a-fA-F]{128}$/;
const HEX_KEY = /^[0-9a-fA-F]{64}$/;

/** The canonical message `witness_sig` signs (wire.md §4). */
export function witnessMessage(attestation: Record<string, unknown>, workspaceId: string): string {
  const { witness_sig: _sig, verifying_key_hex: _key, ...signed } = attestation;
  return canonicalize({ ...signed, workspace_id: workspaceId });
}

/** The legacy message some existing clients sign. */
export function legacyWitnessMessage(attestation: Record<string, unknown>): string {
  return `${String(attestation.input_hash)}:${String(attestation.output_hash)}:${String(attestation.executed_at)}`;
}

/** `witness_sig` and `verifying_key_hex` for an attestation, in the canonical form. */
export function signWitness(attestation: Record<string, unknown>, workspaceId: string, key: SigningKey): { witness_sig: string; verifying_key_hex: string } {
  return { witness_sig: key.ed25519SignHex(witnessMessage(attestation, workspaceId)), verifying_key_hex: key.publicKeyHex };
}

// Public keys repeat (one per client); building a KeyObject costs more than a verification.
const publicKeys = new Map<string, KeyObject | null>();
const PUBLIC_KEY_CACHE_SIZE = 1024;

function publicKeyObject(hex: string): KeyObject | null {
  const cached = publicKeys.get(hex);
  if (cached !== undefined) return cached;
  let key: KeyObject | null;
  try {
    key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });
  } catch {
    key = null;
  }
  if (publicKeys.size >= PUBLIC_KEY_CACHE_SIZE) publicKeys.delete(publicKeys.keys().next().value as string);
  publicKeys.set(hex, key);
  return key;
}

/** Verifies a hex Ed25519 signature over a message (a string as its UTF-8 bytes) with a hex public key. Never throws. */
export function verifyEd25519(message: string | Uint8Array, signatureHex: string, publicKeyHex: string): boolean {
  if (!HEX_SIG.test(signatureHex) || !HEX_KEY.test(publicKeyHex)) return false;
  const key = publicKeyObject(publicKeyHex.toLowerCase());
  if (!key) return false;
  try {
    const bytes = typeof message === 'string' ? Buffer.from(message, 'utf8') : message;
    return verify(null, bytes, key, Buffer.from(signatureHex, 'hex'));
  } catch {
    return false;
  }
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
