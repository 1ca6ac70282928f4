/**
 * Runs a Python 3 script of the tests' independent implementations (written from the RFC and C2SP
 * texts, sharing no code with the product): one JSON request on stdin, one JSON answer on stdout.
 */
import { execFileSync, spawn } from 'node:child_process';
import { basename } from 'node:path';

let interpreter: string | undefined;

/**
 * The Python 3 interpreter's own path, asked of `python3` once per worker: a version manager's
 * shim (pyenv's runs a dozen shell processes) then costs one start instead of one per check.
 */
export function python(): string {
  interpreter ??= execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim() || 'python3';
  return interpreter;
}

export function runPythonJson<T>(script: string, request: Record<string, unknown>): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(python(), [script], { stdio: ['pipe', 'pipe', 'pipe'] });
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
