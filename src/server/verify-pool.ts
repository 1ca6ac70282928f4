/**
 * Worker threads that check the witness signatures of attestation batches beside the request
 * thread (docs/decisions.md): verification is most of a batch's cost. A batch's signatures are
 * split between the workers and the request thread, which checks its own share while the workers
 * check theirs and then waits for them (Atomics.wait on a shared buffer). The request stays
 * synchronous, so batches never pile up half-done in memory waiting for a worker.
 *
 * A small batch is checked in the request thread alone, where handing out work costs more than it
 * saves. Only the built service has workers (their code is dist/lib/verify-worker.js); where that
 * file is missing, or a worker does not answer, signatures are checked in the request thread, with
 * the same code.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { witnessFormOf, type WitnessForm } from '../core/signing/ed25519.js';
import { FORM_CODES, type WitnessJob, type WitnessRequest } from './witness.js';

/** Fewer signatures than this are checked in the request thread alone. */
export const POOL_MIN_JOBS = 8;

/** Longest wait for a worker's share; a worker that misses it is retired and its share checked here. */
const WORKER_TIMEOUT_MS = 5_000;

/** A worker holds one share of one batch at a time: a small heap keeps its memory small. */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 64 };

export class VerifyPool {
  readonly #workers: Worker[] = [];

  private constructor(script: URL, size: number) {
    for (let i = 0; i < size; i += 1) {
      const worker = new Worker(script, { resourceLimits: WORKER_LIMITS });
      worker.on('error', () => this.#retire(worker));
      worker.on('exit', () => this.#retire(worker));
      // Workers never keep a process alive by themselves.
      worker.unref();
      this.#workers.push(worker);
    }
  }

  /**
   * A pool of `size` workers, or null when there are none to start (size below 1, or the worker
   * code not built: tests that run the service from source). `script` is the built worker, beside
   * this module in dist/lib (a test running this module from source names dist's).
   */
  static start(size: number, script = new URL('../lib/verify-worker.js', import.meta.url)): VerifyPool | null {
    if (size < 1) return null;
    if (!existsSync(fileURLToPath(script))) return null;
    return new VerifyPool(script, size);
  }

  /** Workers running. */
  get size(): number {
    return this.#workers.length;
  }

  /** The form of each signature, in order (null: it verifies under neither form). */
  verify(jobs: readonly WitnessJob[]): (WitnessForm | null)[] {
    const workers = this.#workers.slice();
    if (jobs.length < POOL_MIN_JOBS || workers.length === 0) return jobs.map(witnessFormOf);
    // Equal shares; the request thread's is the last (it also hands out the others).
    const share = Math.ceil(jobs.length / (workers.length + 1));
    const sent: { worker: Worker; from: number; to: number; control: Int32Array; forms: Int8Array }[] = [];
    for (let i = 0; i < workers.length; i += 1) {
      const from = i * share;
      const to = Math.min(jobs.length, from + share);
      if (from >= to) break;
      const buffer = new SharedArrayBuffer(4 + (to - from));
      const request: WitnessRequest = { jobs: jobs.slice(from, to), buffer };
      workers[i].postMessage(request);
      sent.push({ worker: workers[i], from, to, control: new Int32Array(buffer, 0, 1), forms: new Int8Array(buffer, 4) });
    }
    const forms = new Array<WitnessForm | null>(jobs.length);
    const own = sent.length * share;
    for (let i = own; i < jobs.length; i += 1) forms[i] = witnessFormOf(jobs[i]);
    for (const { worker, from, to, control, forms: codes } of sent) {
      const done = Atomics.wait(control, 0, 0, WORKER_TIMEOUT_MS) !== 'timed-out' || Atomics.load(control, 0) === 1;
      if (!done) this.#retire(worker);
      for (let i = from; i < to; i += 1) forms[i] = done ? FORM_CODES[codes[i - from]]! : witnessFormOf(jobs[i]);
    }
    return forms;
  }

  /** A worker that failed, exited or did not answer takes no more work. */
  #retire(worker: Worker): void {
    const index = this.#workers.indexOf(worker);
    if (index >= 0) this.#workers.splice(index, 1);
    void worker.terminate();
  }

  /** Stops the workers. */
  async close(): Promise<void> {
    const workers = this.#workers.splice(0);
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}
