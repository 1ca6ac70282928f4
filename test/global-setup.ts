/**
 * Builds dist/ once before the suite, so end-to-end tests run the CLI and library as built from the
 * current source and no test file has to rebuild (which would race with the others).
 *
 * Every temporary directory of the run (the tests' homes and stores, what spawned processes write,
 * the PostgreSQL clusters) is made under one directory, the run's TMPDIR, which is removed when the
 * run ends. Vitest stops its workers without their exit handlers running, so clean-up at a worker's
 * exit left about 650 directories in /tmp after every run.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  execFileSync(process.execPath, ['scripts/build.mjs', '--no-types'], { stdio: 'inherit' });
  const root = mkdtempSync(join(tmpdir(), 'govctl-test-run-'));
  // Others may pass through, not list or write: the PostgreSQL server runs as its own user and must
  // reach its data directory inside.
  chmodSync(root, 0o711);
  // Read by os.tmpdir() in this process, in the workers forked after this setup, and in every
  // process they spawn.
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
