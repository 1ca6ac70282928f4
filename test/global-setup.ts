/**
 * Builds dist/ once before the suite, so end-to-end tests run the CLI and library as built from the
 * current source and no test file has to rebuild (which would race with the others), and starts the
 * run's PostgreSQL cluster (postgres-setup.ts) meanwhile.
 *
 * Every temporary directory of the run (the tests' homes and stores, what spawned processes write,
 * the PostgreSQL clusters) is made under one directory, the run's TMPDIR, which is removed when the
 * run ends, by a process of its own ({@link removeInBackground}). Vitest stops its workers without
 * their exit handlers running, so clean-up at a worker's exit left about 650 directories in /tmp
 * after every run.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startRunPostgres } from './postgres-setup.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const root = mkdtempSync(join(tmpdir(), 'govctl-test-run-'));
  // Others may pass through, not list or write: the PostgreSQL server runs as its own user and must
  // reach its data directory inside.
  chmodSync(root, 0o711);
  // Read by os.tmpdir() in this process, in the workers forked after this setup, and in every
  // process they spawn.
  process.env.TMPDIR = root;
  // The build and the PostgreSQL cluster do not depend on each other: the build runs in a process
  // of its own while the cluster is made (each took about 1 s of the run's start, one after the other).
  const build = buildDist();
  // Handled from now on: a build that fails before the cluster is up must not be an unhandled
  // rejection, which would end the run before the cluster could be stopped.
  build.catch(() => {});
  let stopPostgres: (() => Promise<void>) | undefined;
  try {
    stopPostgres = await startRunPostgres(project);
    await build;
  } catch (error) {
    await build.catch(() => {});
    await stopPostgres?.();
    removeInBackground(root);
    throw error;
  }
  return async () => {
    await stopPostgres();
    removeInBackground(root);
  };
}

/** `node scripts/build.mjs --no-types`, its output on the run's. */
function buildDist(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/build.mjs', '--no-types'], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`the build failed (${signal ?? `exit ${code}`}); run \`npm run build\` to see why`)),
    );
  });
}

/**
 * Removes `dir` in a process of its own that outlives the run: by the end the shared PostgreSQL
 * cluster holds about 90 databases (some 30 000 files, 1.2 GB with its WAL), which took 3.5–4.5 s
 * to delete after the last test had finished, time `npm test` spent on nothing but clean-up. The
 * remover is detached and started last (every server of the run has been stopped by then), so the
 * directory is gone a few seconds after the run, and the run does not wait for it.
 */
function removeInBackground(dir: string): void {
  const remover = spawn(process.execPath, ['-e', 'require("node:fs").rmSync(process.argv[1], { recursive: true, force: true })', dir], {
    detached: true,
    stdio: 'ignore',
  });
  remover.unref();
}
