import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Build the bundle once, before any test file runs: end-to-end tests spawn bin/govctl.js.
    // Then start the run's throw-away PostgreSQL cluster, one for every file (test/postgres-setup.ts).
    globalSetup: ['test/global-setup.ts', 'test/postgres-setup.ts'],
    // end-to-end tests spawn processes and servers; two cores on CI
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at a time. Vitest's default on this 2-core machine is one (cores - 1), which runs
    // the suite file after file although much of it waits on sockets, child processes and pipes.
    // Files share nothing (temporary directories, servers on port 0), so they can overlap.
    maxWorkers: 2,
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results.json' },
  },
});
