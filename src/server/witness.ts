/**
 * One attestation's `witness_sig` check, as data: what the batch endpoint hands to the verify pool
 * (verify-pool.ts) and what the pool's workers, or the request itself, compute (wire.md §4).
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

/**
 * What a worker is sent: jobs, and a shared buffer for the answer: an Int32 set to 1 (and
 * notified) when done, then one byte per job, its form's index in {@link FORM_CODES}.
 */
export interface WitnessRequest {
  jobs: WitnessJob[];
  buffer: SharedArrayBuffer;
}

/** A form as one byte of a worker's answer. */
export const FORM_CODES: readonly (WitnessForm | null)[] = [null, 'canonical', 'legacy'];

/** The form `witness_sig` verifies under, or null when it verifies under neither. */
export function witnessForm(job: WitnessJob): WitnessForm | null {
  if (verifyEd25519(job.canonical, job.signature, job.publicKey)) return 'canonical';
  if (verifyEd25519(job.legacy, job.signature, job.publicKey)) return 'legacy';
  return null;
}

/** Checks a request's jobs into its buffer and wakes the thread waiting on it. */
export function answerWitnessRequest({ jobs, buffer }: WitnessRequest): void {
  const control = new Int32Array(buffer, 0, 1);
  const codes = new Int8Array(buffer, 4);
  for (let i = 0; i < jobs.length; i += 1) codes[i] = FORM_CODES.indexOf(witnessForm(jobs[i]!));
  Atomics.store(control, 0, 1);
  Atomics.notify(control, 0);
}
