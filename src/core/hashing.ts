/**
 * SHA-256 for attestation input/output hashes: strings, bytes, streams (files, stdin) and
 * structured values (hashed in their canonical JSON form so that any client agrees).
 */
import { createHash, hash } from 'node:crypto';
import { canonicalize } from './canonical-json.js';

/** Lower-case hex SHA-256 of a string (UTF-8) or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  // one-shot (Node ≥ 20.12): one call into the crypto library, not three (every stored record's log leaf hashes twice)
  return hash('sha256', data, 'hex');
}

/**
 * Hash of any value an attested function takes or returns: bytes and strings as they are,
 * anything else as its canonical JSON (docs/wire-format.md), so `{b:1,a:2}` and `{a:2,b:1}` agree.
 */
export function hashValue(value: unknown): string {
  if (typeof value === 'string' || value instanceof Uint8Array) return sha256Hex(value);
  return sha256Hex(canonicalize(value === undefined ? null : value));
}

/**
 * Streams bytes through SHA-256 without holding them.
 * @param onProgress called with the running byte count after each chunk
 */
export async function sha256Stream(source: AsyncIterable<Uint8Array | string>, onProgress?: (bytes: number) => void): Promise<{ hash: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of source) {
    hash.update(chunk);
    bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
    onProgress?.(bytes);
  }
  return { hash: hash.digest('hex'), bytes };
}
