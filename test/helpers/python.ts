/**
 * Runs a Python 3 script of the tests' independent implementations (written from the RFC and C2SP
 * texts, sharing no code with the product): one JSON request on stdin, one JSON answer on stdout.
 */
import { spawn } from 'node:child_process';
import { basename } from 'node:path';

export function runPythonJson<T>(script: string, request: Record<string, unknown>): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [script], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${basename(script)} exited ${code}: ${Buffer.concat(err).toString('utf8')}`));
      else resolve(JSON.parse(Buffer.concat(out).toString('utf8')) as T);
    });
    child.stdin.end(JSON.stringify(request));
  });
}
