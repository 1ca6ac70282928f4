import { defineConfig } from 'vitest/config';
import SmallerProjectFirst from './test/sequencer.js';

/** What every project shares. */
const shared = {
  // end-to-end tests spawn processes and servers; two cores on CI
  testTimeout: 30_000,
  hookTimeout: 60_000,
  // A worker keeps its modules from one file to the next instead of a fresh process per file:
  // Fastify, the store, the CLI and vitest itself are loaded once per worker, not once per file
  // (about a quarter of the suite's CPU). Safe because no test file leaves state behind in a module
  // it shares: nothing mocks modules, the one test that sets process.env restores it, fake timers
  // are put back, and the modules' own state is caches of pure results
  // (docs/decisions.md, "Real tests that run fast on two cores").
  isolate: false,
};

export default defineConfig({
  test: {
    // Build the bundle once, before any test file runs (end-to-end tests spawn bin/govctl.js), and
    // meanwhile start the run's throw-away PostgreSQL cluster, one for every file of both projects
    // (test/postgres-setup.ts). The root's global setup runs once per run; the projects below do
    // not extend the root, so that they do not run it a second time.
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // The project with less work first, so that the run does not end on one long file (test/sequencer.ts).
    sequence: { sequencer: SmallerProjectFirst },
    // Three files at a time on a 2-core machine. Vitest's default is one (cores - 1), which runs
    // the suite file after file although much of it waits on sockets, child processes, pipes and
    // (server-postgres) the PostgreSQL server, another process. Files share nothing (temporary
    // directories, servers on port 0, a database per file), so they can overlap
    // (docs/decisions.md, "Real tests that run fast on two cores").
    maxWorkers: 3,
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results.json' },
    // The service suite runs on both backends (docs/decisions.md, "Real tests that run
    // fast on two cores"): once on SQLite in `default` with everything else, and again in `server-postgres`
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
