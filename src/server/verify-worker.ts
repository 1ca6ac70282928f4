/**
 * A verify-pool worker (verify-pool.ts): checks the witness signatures it is sent and answers in
 * the shared buffer that came with them. Built as its own file, dist/lib/verify-worker.js.
 */
import { parentPort } from 'node:worker_threads';
import { answerWitnessRequest, type WitnessRequest } from './witness.js';

parentPort?.on('message', (request: WitnessRequest) => answerWitnessRequest(request));
