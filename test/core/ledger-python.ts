/**
 * Runs test/core/ledger_reference.py, the independent Python implementation of the ledger
 * formats, once per test file: one JSON request on stdin, one JSON answer on stdout.
 */
import { fileURLToPath } from 'node:url';
import { runPythonJson } from '../helpers/python.js';

export function runReference<T>(request: Record<string, unknown>): Promise<T> {
  return runPythonJson<T>(fileURLToPath(new URL('./ledger_reference.py', import.meta.url)), request);
}
