/**
 * Worker threads that check the witness signatures of attestation batches (docs/decisions.md):
 * verification is most of a batch's cost, and while a worker verifies one batch the request
 * thread parses, validates and stores the next. A batch is split across the workers; a small one
 * is checked in the request itself, where the hop to a worker would cost more than it saves.
 *
 * Only the built service has workers (their code is dist/lib/verify-worker.js); where that file is
 * missing, or a worker fails, signatures are checked in the request thread, with the same code.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { WitnessForm } from '../core/signing/ed25519.js';
import { witnessForm, type WitnessJob } from './witness.js';

/** Fewer signatures than this are checked in the request thread. */
export const POOL_MIN_JOBS = 8;

interface Pending {
  resolve(forms: (WitnessForm | null)[]): void;
  jobs: WitnessJob[];
}

interface PoolWorker {
  worker: Worker;
  pending: Map<number, Pending>;
}

export class VerifyPool {
  readonly #workers: PoolWorker[] = [];
  #nextId = 1;
  #closed = false;

  private constructor(script: URL, size: number) {
    for (let i = 0; i < size; i += 1) {
      const entry: PoolWorker = { worker: new Worker(script), pending: new Map() };
      entry.worker.on('message', (message: { id: number; forms: (WitnessForm | null)[] }) => {
        const pending = entry.pending.get(message.id);
        entry.pending.delete(message.id);
        if (entry.pending.size === 0) entry.worker.unref();
        pending?.resolve(message.forms);
      });
      const fail = () => this.#retire(entry);
      entry.worker.on('error', fail);
      entry.worker.on('exit', fail);
      // An idle pool never keeps a process alive; a worker with jobs out does (see #send).
      entry.worker.unref();
      this.#workers.push(entry);
    }
  }

  /**
   * A pool of `size` workers, or null when there are none to start (size below 1, or the worker
   * code not built: tests that run the service from source).
   */
  static start(size: number): VerifyPool | null {
    if (size < 1) return null;
    const script = new URL('../lib/verify-worker.js', import.meta.url);
    if (!existsSync(fileURLToPath(script))) return null;
    return new VerifyPool(script, size);
  }

  /** Workers running. */
  get size(): number {
    return this.#workers.length;
  }

  /** The form of each signature, in order. Never rejects: without a worker, it checks in this thread. */
  async verify(jobs: readonly WitnessJob[]): Promise<(WitnessForm | null)[]> {
    if (jobs.length < POOL_MIN_JOBS || this.#workers.length === 0 || this.#closed) return jobs.map(witnessForm);
    const parts = Math.min(this.#workers.length, Math.ceil(jobs.length / POOL_MIN_JOBS));
    const per = Math.ceil(jobs.length / parts);
    const results = await Promise.all(
      Array.from({ length: parts }, (_, i) => this.#send(jobs.slice(i * per, (i + 1) * per))),
    );
    return results.flat();
  }

  #send(jobs: WitnessJob[]): Promise<(WitnessForm | null)[]> {
    // The least busy worker.
    let target = this.#workers[0];
    for (const entry of this.#workers) if (target === undefined || entry.pending.size < target.pending.size) target = entry;
    if (target === undefined) return Promise.resolve(jobs.map(witnessForm));
    const id = this.#nextId++;
    const chosen = target;
    return new Promise((resolve) => {
      if (chosen.pending.size === 0) chosen.worker.ref();
      chosen.pending.set(id, { resolve, jobs });
      chosen.worker.postMessage({ id, jobs });
    });
  }

  /** A worker that failed or exited: its jobs are checked here, and it takes no more. */
  #retire(entry: PoolWorker): void {
    const index = this.#workers.indexOf(entry);
    if (index >= 0) this.#workers.splice(index, 1);
    for (const pending of entry.pending.values()) pending.resolve(pending.jobs.map(witnessForm));
    entry.pending.clear();
  }

  /** Stops the workers; jobs still out are checked in this thread. */
  async close(): Promise<void> {
    this.#closed = true;
    const workers = this.#workers.splice(0);
    for (const entry of workers) {
      entry.worker.removeAllListeners('exit');
      for (const pending of entry.pending.values()) pending.resolve(pending.jobs.map(witnessForm));
      entry.pending.clear();
    }
    await Promise.all(workers.map((entry) => entry.worker.terminate()));
  }
}
