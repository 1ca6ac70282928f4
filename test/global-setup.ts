/**
 * Builds dist/ once before the suite, so end-to-end tests run the CLI and library as built from the
 * current source and no test file has to rebuild (which would race with the others).
 *
 * Every temporary directory of the run (the tests' homes and stores, what spawned processes write,
 * the PostgreSQL clusters) is made under one directory, the run's TMPDIR, which is removed when the
 * run ends, by a process of its own ({@link removeInBackground}). Vitest stops its workers without
 * their exit handlers running, so clean-up at a worker's exit left about 650 directories in /tmp
 * after every run.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
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
  return () => removeInBackground(root);
}

/**
 * Removes `dir` in a process of its own that outlives the run: by the end the shared PostgreSQL
 * cluster holds about 90 databases (some 30 000 files, 1.2 GB with its WAL), which took 3.5–4.5 s
 * to delete after the last test had finished, time `npm test` spent on nothing but clean-up. The
 * remover is detached and started last (every server of the run has been stopped by then: the
 * PostgreSQL setup's teardown runs before this one), so the directory is gone a few seconds after
 * the run, and the run does not wait for it.
 */
function removeInBackground(dir: string): void {
  const remover = spawn(process.execPath, ['-e', 'require("node:fs").rmSync(process.argv[1], { recursive: true, force: true })', dir], {
    detached: true,
    stdio: 'ignore',
  });
  remover.unref();
}
