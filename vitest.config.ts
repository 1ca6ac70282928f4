import { defineConfig } from 'vitest/config';
import SmallerProjectFirst from './test/sequencer.js';

/** Each store's schema.sql is imported as its text, as the bundle does (scripts/build.mjs). */
const sqlAsText = {
  name: 'sql-as-text',
  transform(code: string, id: string) {
    return id.endsWith('.sql') ? { code: `export default ${JSON.stringify(code)};`, map: null } : undefined;
  },
};

/** What every project shares. */
const shared = {
  // end-to-end tests spawn processes and servers; two cores on CI
  testTimeout: 30_000,
  hookTimeout: 60_000,
  // A worker keeps its modules from one file to the next instead of a fresh process per file:
  // Fastify, the store, the CLI and vitest itself are loaded once per worker, not once per file
  // (about a quarter of the suite's CPU). Safe because no test file leaves state behind in a module
  // it shares: nothing mocks modules, the one test that sets process.env restores it, fake timers
  // are put back, and the modules' own state is caches of pure results. Measured:
  // docs/decisions.md, "Three test files at a time, workers keep their modules, the smaller project first".
  isolate: false,
};

export default defineConfig({
  // the global setup (test/postgres-setup.ts) creates the template database's schema too
  plugins: [sqlAsText],
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
    // directories, servers on port 0, a database per file), so they can overlap. Measured:
    // docs/decisions.md, "Three test files at a time, workers keep their modules, the smaller project first".
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
        plugins: [sqlAsText],
        test: { ...shared, name: 'default', include: ['test/**/*.test.ts'] },
      },
      {
        plugins: [sqlAsText],
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
