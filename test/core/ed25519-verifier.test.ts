/**
 * The two Ed25519 backends (libsodium through sodium-native, Node's OpenSSL as the fallback) give
 * the same answer on every signature: the RFC 8032 and Python vectors, fresh ones, tampered ones,
 * and the edge cases the shared checks exist for.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ed25519Backend, passesEd25519Checks, verifyEd25519Bytes, type Ed25519Backend } from '../../src/core/signing/ed25519-verifier.js';
import { SigningKey } from '../../src/core/signing/keys.js';

interface RfcVector {
  name: string;
  public_key_hex: string;
  message_hex: string;
  signature_hex: string;
}
interface WitnessVector {
  name: string;
  public_key_hex: string;
  message: string;
  signature_hex: string;
}
const vectors = JSON.parse(readFileSync(new URL('../vectors/signatures.json', import.meta.url), 'utf8')) as {
  ed25519_rfc8032: RfcVector[];
  ed25519_witness: WitnessVector[];
};

const BACKENDS: Ed25519Backend[] = ['libsodium', 'openssl'];
const hex = (text: string) => Buffer.from(text, 'hex');
/** The answer of each backend, in BACKENDS order. */
const answers = (message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array) =>
  BACKENDS.map((backend) => verifyEd25519Bytes(message, signature, publicKey, backend));

/** L, the group order, as a bigint. */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const toLe = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse();
const fromLe = (bytes: Uint8Array) => BigInt(`0x${Buffer.from(bytes).reverse().toString('hex')}`);

describe('Ed25519 verification backends', () => {
  it('uses libsodium here (sodium-native ships a prebuilt binary for this platform)', () => {
    expect(ed25519Backend()).toBe('libsodium');
  });

  it('both accept the RFC 8032 and Python-made signatures and reject them tampered', () => {
    const cases = [
      ...vectors.ed25519_rfc8032.map((v) => ({ message: hex(v.message_hex), signature: hex(v.signature_hex), key: hex(v.public_key_hex) })),
      ...vectors.ed25519_witness.map((v) => ({ message: Buffer.from(v.message, 'utf8'), signature: hex(v.signature_hex), key: hex(v.public_key_hex) })),
    ];
    expect(cases.length).toBeGreaterThan(10);
    for (const { message, signature, key } of cases) {
      expect(answers(message, signature, key)).toEqual([true, true]);
      const flipped = Buffer.from(signature);
      flipped[10] ^= 1;
      expect(answers(message, flipped, key)).toEqual([false, false]);
      expect(answers(Buffer.concat([message, Buffer.from('x')]), signature, key)).toEqual([false, false]);
    }
  });

  it('both agree on 200 fresh signatures and their one-bit corruptions', () => {
    for (let i = 0; i < 200; i += 1) {
      const { key } = SigningKey.generate();
      const message = Buffer.from(`attestation ${i} ${'x'.repeat(i)}`);
      const signature = hex(key.ed25519SignHex(message));
      const publicKey = hex(key.publicKeyHex);
      expect(answers(message, signature, publicKey)).toEqual([true, true]);
      const bit = (i * 37) % 512;
      const corrupted = Buffer.from(signature);
      corrupted[bit >> 3] ^= 1 << (bit & 7);
      const [sodium, openssl] = answers(message, corrupted, publicKey);
      expect(sodium).toBe(false);
      expect(openssl).toBe(sodium);
    }
  });

  it('both reject a malleated S (S + L), a small-order key or R, and a non-canonical key', () => {
    const v = vectors.ed25519_rfc8032[1];
    const message = hex(v.message_hex);
    const signature = hex(v.signature_hex);
    const key = hex(v.public_key_hex);
    const malleated = Buffer.concat([signature.subarray(0, 32), toLe(fromLe(signature.subarray(32)) + L)]);
    expect(answers(message, malleated, key)).toEqual([false, false]);

    // The identity as the key, with R the identity and S = 0, "verifies" any message by the
    // group equation alone: the small-order check is what refuses it.
    const identity = hex('01'.padEnd(64, '0'));
    const trivial = Buffer.concat([identity, Buffer.alloc(32)]);
    expect(passesEd25519Checks(trivial, identity)).toBe(false);
    expect(answers(Buffer.from('anything'), trivial, identity)).toEqual([false, false]);
    const order8 = hex('26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85'); // sign bit set
    expect(passesEd25519Checks(Buffer.concat([order8, signature.subarray(32)]), key)).toBe(false);
    expect(passesEd25519Checks(signature, order8)).toBe(false);

    // y = p + 1: a second encoding of y = 1.
    const nonCanonical = hex('ee'.padEnd(62, 'f') + '7f');
    expect(passesEd25519Checks(signature, nonCanonical)).toBe(false);
    expect(answers(message, signature, nonCanonical)).toEqual([false, false]);

    // The checks pass an ordinary signature.
    expect(passesEd25519Checks(signature, key)).toBe(true);
    expect(answers(message, signature.subarray(0, 63), key)).toEqual([false, false]);
  });
});
