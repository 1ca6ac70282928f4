/**
 * A verify-pool worker (verify-pool.ts): checks the witness signatures it is sent and answers
 * with their forms. Built as its own file, dist/lib/verify-worker.js.
 */
import { parentPort } from 'node:worker_threads';
import { witnessForm, type WitnessJob } from './witness.js';

parentPort?.on('message', (message: { id: number; jobs: WitnessJob[] }) => {
  parentPort!.postMessage({ id: message.id, forms: message.jobs.map(witnessForm) });
});
