/**
 * Ed25519 verification, the service's hottest computation (docs/wire-format.md). libsodium through
 * sodium-native (prebuilt, no compiler needed) verifies about twice as fast as Node's OpenSSL on
 * the machines measured (docs/decisions.md); Node's OpenSSL stays as the fallback where
 * sodium-native cannot load. Both run behind the same checks, so they accept and reject the same
 * signatures:
 * - S must be below the group order L (no malleable second encoding of a signature);
 * - the public key A must be a canonical encoding (y < p) and neither A nor R may be a point of
 *   small order (libsodium's rules; OpenSSL alone would accept a small-order key with a trivial
 *   signature over any message).
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import { SPKI_ED25519_PREFIX } from './keys.js';

export type Ed25519Backend = 'libsodium' | 'openssl';

interface SodiumVerify {
  crypto_sign_verify_detached(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean;
}

/** The encodings of the eight points of small order (the torsion subgroup), with the sign bit cleared. */
const SMALL_ORDER = [
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0100000000000000000000000000000000000000000000000000000000000000',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
].map((hex) => Buffer.from(hex, 'hex'));

/** L, the order of the base point, little-endian. */
const ORDER_L = Buffer.from('edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010', 'hex');

/** Whether a 32-byte point encoding, sign bit ignored, is one of the small-order points. */
function isSmallOrder(encoding: Uint8Array): boolean {
  outer: for (const point of SMALL_ORDER) {
    for (let i = 0; i < 31; i += 1) if (encoding[i] !== point[i]) continue outer;
    if ((encoding[31] & 0x7f) === point[31]) return true;
  }
  return false;
}

/** Whether a little-endian 256-bit number is below `bound` (also little-endian). */
function isBelow(value: Uint8Array, bound: Uint8Array): boolean {
  for (let i = 31; i >= 0; i -= 1) {
    if (value[i] < bound[i]) return true;
    if (value[i] > bound[i]) return false;
  }
  return false;
}

/** Whether y (the encoding without its sign bit) is below p = 2^255 - 19. */
function isCanonicalPoint(encoding: Uint8Array): boolean {
  if ((encoding[31] & 0x7f) !== 0x7f) return true;
  for (let i = 30; i > 0; i -= 1) if (encoding[i] !== 0xff) return true;
  return encoding[0] < 0xed;
}

/** The checks both backends run behind; false rejects the signature before any curve arithmetic. */
export function passesEd25519Checks(signature: Uint8Array, publicKey: Uint8Array): boolean {
  return (
    signature.length === 64 &&
    publicKey.length === 32 &&
    isBelow(signature.subarray(32), ORDER_L) &&
    isCanonicalPoint(publicKey) &&
    !isSmallOrder(publicKey) &&
    !isSmallOrder(signature.subarray(0, 32))
  );
}

let sodium: SodiumVerify | null | undefined;

/** sodium-native, or null where it cannot load (no prebuilt binary for the platform). */
function loadSodium(): SodiumVerify | null {
  if (sodium !== undefined) return sodium;
  try {
    sodium = createRequire(import.meta.url)('sodium-native') as SodiumVerify;
  } catch {
    sodium = null;
  }
  return sodium;
}

// Public keys repeat (one per client); building a KeyObject costs more than a verification.
const keyObjects = new Map<string, KeyObject | null>();
const KEY_CACHE_SIZE = 1024;

function keyObject(publicKey: Uint8Array): KeyObject | null {
  const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString('latin1');
  const cached = keyObjects.get(id);
  if (cached !== undefined) return cached;
  let key: KeyObject | null;
  try {
    key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, publicKey]), format: 'der', type: 'spki' });
  } catch {
    key = null;
  }
  if (keyObjects.size >= KEY_CACHE_SIZE) keyObjects.delete(keyObjects.keys().next().value as string);
  keyObjects.set(id, key);
  return key;
}

const BACKENDS: Record<Ed25519Backend, (message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array) => boolean> = {
  libsodium: (message, signature, publicKey) => loadSodium()!.crypto_sign_verify_detached(signature, message, publicKey),
  openssl: (message, signature, publicKey) => {
    const key = keyObject(publicKey);
    if (!key) return false;
    try {
      return verify(null, message, key, signature);
    } catch {
      return false;
    }
  },
};

/** The backend in use: libsodium when sodium-native loads, else OpenSSL. */
export function ed25519Backend(): Ed25519Backend {
  return loadSodium() ? 'libsodium' : 'openssl';
}

/**
 * Verifies an Ed25519 signature (64 bytes) over `message` with a 32-byte public key. Never throws.
 * @param backend for tests and benchmarks: the backend to use (default: {@link ed25519Backend})
 */
export function verifyEd25519Bytes(message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array, backend: Ed25519Backend = ed25519Backend()): boolean {
  if (!passesEd25519Checks(signature, publicKey)) return false;
  return BACKENDS[backend](message, signature, publicKey);
}
