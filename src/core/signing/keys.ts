/**
 * The signing key: a 32-byte secret written as 64 hex characters (docs/wire-format.md "client_sig"). The same bytes
 * key the HMAC of `client_sig` and seed the Ed25519 key pair of `witness_sig` (docs/wire-format.md "witness_sig").
 * This module and its two siblings are the only code that touches key bytes; the key never
 * appears in a message, an error, a log line or JSON.
 */
import { createHmac, createPrivateKey, createPublicKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import { SigningKeyError } from './errors.js';

export { SigningKeyError };

// DER prefixes that wrap a raw 32-byte Ed25519 seed (PKCS#8) or public key (SPKI), RFC 8410.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
export const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

const KEY_HEX = /^[0-9a-fA-F]{64}$/;
const REDACTED = '[SigningKey: redacted]';

export class SigningKey {
  readonly #seed: Buffer;
  #privateKey?: KeyObject;
  #publicKeyHex?: string;

  private constructor(seed: Buffer) {
    this.#seed = seed;
  }

  /**
   * Parses a hex signing key (surrounding white space allowed, as in a key file).
   * @param setting the setting's name for the error message, e.g. `SERVICE_SIGNING_KEY`
   * @throws SigningKeyError when the value is not 64 hex characters
   */
  static fromHex(hex: string, setting = 'SERVICE_SIGNING_KEY'): SigningKey {
    const trimmed = typeof hex === 'string' ? hex.trim() : '';
    if (!KEY_HEX.test(trimmed)) throw new SigningKeyError(setting);
    return new SigningKey(Buffer.from(trimmed, 'hex'));
  }

  /** A new random key and its hex form (the only time the hex is handed out). */
  static generate(): { key: SigningKey; hex: string } {
    const seed = randomBytes(32);
    return { key: new SigningKey(Buffer.from(seed)), hex: seed.toString('hex') };
  }

  /** Lower-case hex HMAC-SHA256 of the UTF-8 bytes of `message`. */
  hmacHex(message: string): string {
    return createHmac('sha256', this.#seed).update(message, 'utf8').digest('hex');
  }

  /** Lower-case hex Ed25519 signature (64 bytes) of `message` (a string is signed as its UTF-8 bytes). */
  ed25519SignHex(message: string | Uint8Array): string {
    const bytes = typeof message === 'string' ? Buffer.from(message, 'utf8') : message;
    return sign(null, bytes, this.#ed25519PrivateKey()).toString('hex');
  }

  /** The Ed25519 public key derived from the seed, 32 bytes as lower-case hex. */
  get publicKeyHex(): string {
    this.#publicKeyHex ??= createPublicKey(this.#ed25519PrivateKey())
      .export({ format: 'der', type: 'spki' })
      .subarray(SPKI_ED25519_PREFIX.length)
      .toString('hex');
    return this.#publicKeyHex;
  }

  #ed25519PrivateKey(): KeyObject {
    this.#privateKey ??= createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, this.#seed]), format: 'der', type: 'pkcs8' });
    return this.#privateKey;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return REDACTED;
  }
}
