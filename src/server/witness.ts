/**
 * One attestation's `witness_sig` check, as data: what the batch endpoint hands to the verify pool
 * (verify-pool.ts) and what the pool, or the request itself, computes (wire.md §4).
 */
import { verifyEd25519, type WitnessForm } from '../core/signing/ed25519.js';

/** A signature to check under both message forms. */
export interface WitnessJob {
  /** the canonical message (core's witnessMessage) */
  canonical: string;
  /** the legacy message `<input_hash>:<output_hash>:<executed_at>` */
  legacy: string;
  /** hex */
  signature: string;
  /** hex */
  publicKey: string;
}

/** The form `witness_sig` verifies under, or null when it verifies under neither. */
export function witnessForm(job: WitnessJob): WitnessForm | null {
  if (verifyEd25519(job.canonical, job.signature, job.publicKey)) return 'canonical';
  if (verifyEd25519(job.legacy, job.signature, job.publicKey)) return 'legacy';
  return null;
}
