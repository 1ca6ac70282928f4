import { defineConfig } from 'vitest/config';

/** What every project shares. */
const shared = {
  // end-to-end tests spawn processes and servers; two cores on CI
  testTimeout: 30_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  test: {
    // Build the bundle once, before any test file runs: end-to-end tests spawn bin/govctl.js.
    // Then start the run's throw-away PostgreSQL cluster, one for every file of both projects
    // (test/postgres-setup.ts). The root's global setup runs once per run; the projects below do
    // not extend the root, so that they do not run it a second time.
    globalSetup: ['test/global-setup.ts', 'test/postgres-setup.ts'],
    pool: 'forks',
    // Three files at a time on a 2-core machine. Vitest's default is one (cores - 1), which runs
    // the suite file after file although much of it waits on sockets, child processes, pipes and
    // (server-postgres) the PostgreSQL server, another process. Files share nothing (temporary
    // directories, servers on port 0, a database per file), so they can overlap. Measured:
    // docs/decisions.md, "Three test files at a time".
    maxWorkers: 3,
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results.json' },
    // The service suite runs on both backends (docs/decisions.md, "The service suite on both
    // backends"): once on SQLite in `default` with everything else, and again in `server-postgres`
    // with GOVCTL_TEST_BACKEND=postgres, where every store, app and server a test builds takes a
    // fresh database on the run's cluster (test/helpers/backend.ts). test/server/postgres is
    // PostgreSQL-only already and runs once, in `default`.
    projects: [
      {
        test: { ...shared, name: 'default', include: ['test/**/*.test.ts'] },
      },
      {
        test: {
          ...shared,
          name: 'server-postgres',
          include: ['test/server/*.test.ts'],
          env: { GOVCTL_TEST_BACKEND: 'postgres' },
        },
      },
    ],
  },
});
