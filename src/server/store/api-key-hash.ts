/**
 * The stored form of an API key, one function for every backend: keys are random 256-bit secrets,
 * so a store keeps only their SHA-256 (a slow password hash buys nothing against a guess of 2^256),
 * and a database copied from one backend to another keeps its keys.
 */
import { hash as oneShotHash } from 'node:crypto';

/** The SHA-256 of an API key, as every backend stores and looks it up. */
export function hashApiKey(apiKey: string): Buffer {
  // one-shot (Node ≥ 20.12): one call into the crypto library per request, not three
  return oneShotHash('sha256', apiKey, 'buffer') as unknown as Buffer;
}
