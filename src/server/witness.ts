/**
 * One attestation's `witness_sig` check, as data: what the batch endpoint hands to the verify pool
 * (verify-pool.ts) and what the pool's workers, or the request itself, compute (docs/wire-format.md). The
 * check itself is core's {@link witnessFormOf}, the same function the CLI and client call.
 */
import { witnessFormOf, type WitnessForm, type WitnessJob } from '../core/signing/ed25519.js';

export type { WitnessJob } from '../core/signing/ed25519.js';

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

/** Checks a request's jobs into its buffer and wakes the thread waiting on it. */
export function answerWitnessRequest({ jobs, buffer }: WitnessRequest): void {
  const control = new Int32Array(buffer, 0, 1);
  const codes = new Int8Array(buffer, 4);
  for (let i = 0; i < jobs.length; i += 1) codes[i] = FORM_CODES.indexOf(witnessFormOf(jobs[i]));
  Atomics.store(control, 0, 1);
  Atomics.notify(control, 0);
}
