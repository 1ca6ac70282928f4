/**
 * Runs test/core/ledger_reference.py, the independent Python implementation of the ledger
 * formats, once per test file: one JSON request on stdin, one JSON answer on stdout.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export function runReference<T>(request: Record<string, unknown>): Promise<T> {
  const script = fileURLToPath(new URL('./ledger_reference.py', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [script], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`ledger_reference.py exited ${code}: ${Buffer.concat(err).toString('utf8')}`));
      else resolve(JSON.parse(Buffer.concat(out).toString('utf8')) as T);
    });
    child.stdin.end(JSON.stringify(request));
  });
}
