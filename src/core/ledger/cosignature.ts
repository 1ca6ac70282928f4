/**
 * C2SP tlog-cosignature, the timestamped Ed25519 cosignature v1 (signature type 0x04): a witness
 * signs `cosignature/v1\ntime <timestamp>\n` followed by the whole checkpoint body, and the note
 * signature is the 4-byte key id ‖ the 8-byte big-endian timestamp ‖ the 64-byte signature.
 */
import type { SigningKey } from '../signing/keys.js';
import { verifyEd25519Bytes } from '../signing/ed25519-verifier.js';
import { LedgerFormatError } from './errors.js';
import {
  formatSignatureLine,
  formatVerifierKey,
  noteKeyId,
  parseVerifierKey,
  SIGNATURE_TYPE_COSIGNATURE_V1,
  type NoteSigner,
  type NoteVerifier,
} from './note.js';

/** 2^63 - 1, the largest timestamp the specification allows. */
const MAX_TIMESTAMP = (1n << 63n) - 1n;

/** The message a v1 cosignature signs: two header lines, then the checkpoint body (with its final newline). */
export function cosignatureMessage(body: string | Uint8Array, timestamp: number): Buffer {
  checkTimestamp(timestamp);
  return Buffer.concat([Buffer.from(`cosignature/v1\ntime ${timestamp}\n`, 'utf8'), typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
}

function checkTimestamp(timestamp: number): void {
  // Timestamps past 2^53 are valid to the specification but centuries beyond any clock; the
  // specification lets verifiers reject timestamps in the future, so they are refused as numbers.
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new RangeError(`a cosignature timestamp is a non-negative safe integer, not ${timestamp}`);
}

/** The timestamp a v1 cosignature (the bytes after the key id) carries, or null when it is not 72 bytes or out of range. */
export function cosignatureTimestamp(signature: Uint8Array): number | null {
  if (signature.length !== 72) return null;
  const timestamp = Buffer.from(signature.buffer, signature.byteOffset, 8).readBigUInt64BE(0);
  if (timestamp > MAX_TIMESTAMP || timestamp > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  return Number(timestamp);
}

/** Verifies v1 cosignatures of one witness key (type 0x04). */
export class CosignatureVerifier implements NoteVerifier {
  readonly keyId: number;

  constructor(
    readonly name: string,
    readonly publicKey: Buffer,
  ) {
    if (publicKey.length !== 32) throw new LedgerFormatError('an Ed25519 public key is 32 bytes');
    this.keyId = noteKeyId(name, SIGNATURE_TYPE_COSIGNATURE_V1, publicKey);
  }

  /** From a verifier key string of type 0x04. @throws LedgerFormatError */
  static fromVerifierKey(vkey: string): CosignatureVerifier {
    const parsed = parseVerifierKey(vkey);
    if (parsed.type !== SIGNATURE_TYPE_COSIGNATURE_V1) throw new LedgerFormatError('not a cosignature (type 0x04) verifier key');
    return new CosignatureVerifier(parsed.name, Buffer.from(parsed.publicKey));
  }

  verify(text: Uint8Array, signature: Uint8Array): boolean {
    const timestamp = cosignatureTimestamp(signature);
    if (timestamp === null) return false;
    return verifyEd25519Bytes(cosignatureMessage(text, timestamp), signature.subarray(8), this.publicKey);
  }

  get verifierKey(): string {
    return formatVerifierKey(this.name, SIGNATURE_TYPE_COSIGNATURE_V1, this.publicKey);
  }
}

/** A witness's cosigner: a key name, its seed and a clock (POSIX seconds) for the timestamp. */
export class CosignatureSigner implements NoteSigner {
  readonly keyId: number;
  readonly verifier: CosignatureVerifier;

  constructor(
    readonly name: string,
    readonly key: SigningKey,
    private readonly now: () => number,
  ) {
    this.verifier = new CosignatureVerifier(name, Buffer.from(key.publicKeyHex, 'hex'));
    this.keyId = this.verifier.keyId;
  }

  /** The signature bytes (timestamp ‖ Ed25519 signature) over a checkpoint body, at the clock's time. */
  sign(text: Uint8Array): Uint8Array {
    const timestamp = Math.floor(this.now());
    checkTimestamp(timestamp);
    const stamp = Buffer.alloc(8);
    stamp.writeBigUInt64BE(BigInt(timestamp));
    return Buffer.concat([stamp, Buffer.from(this.key.ed25519SignHex(cosignatureMessage(text, timestamp)), 'hex')]);
  }

  /** The signature line (with its newline) cosigning a checkpoint body. */
  cosign(body: string): string {
    return formatSignatureLine(this.name, this.keyId, this.sign(Buffer.from(body, 'utf8')));
  }

  get verifierKey(): string {
    return this.verifier.verifierKey;
  }
}
