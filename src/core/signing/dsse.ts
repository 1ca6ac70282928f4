/**
 * DSSE, the Dead Simple Signing Envelope (version 1): a payload and its type, signed over the
 * pre-authentication encoding (PAE) of the two, so that a signature covers exactly the bytes and
 * the type it was made for. The gate verdicts of docs/ci.md travel in one; the verifier is
 * src/client/verify/verdict.ts.
 */
import { keyFingerprint } from './ed25519.js';
import type { SigningKey } from './keys.js';

/** The payload type of an in-toto Statement in a DSSE envelope. */
export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';

/** A DSSE envelope in its JSON form: base64 payload, one or more signatures. */
export interface DsseEnvelope {
  payloadType: string;
  /** base64 (standard alphabet, padded) of the serialized body */
  payload: string;
  signatures: { keyid: string; sig: string }[];
}

/**
 * PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, where LEN is the decimal
 * byte length without leading zeros: the bytes a DSSE signature covers.
 */
export function dssePae(payloadType: string, body: Uint8Array): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `, 'ascii'), type, Buffer.from(` ${body.length} `, 'ascii'), body]);
}

/**
 * Signs `body` as a DSSE envelope with the key's Ed25519 pair. The `keyid` is the key's
 * fingerprint (hex SHA-256 of the public key bytes): a hint for choosing a key, never trusted.
 */
export function signDsse(payloadType: string, body: Uint8Array, key: SigningKey): DsseEnvelope {
  const sig = Buffer.from(key.ed25519SignHex(dssePae(payloadType, body)), 'hex').toString('base64');
  return { payloadType, payload: Buffer.from(body).toString('base64'), signatures: [{ keyid: keyFingerprint(key.publicKeyHex), sig }] };
}
