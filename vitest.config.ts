import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Build the bundle once, before any test file runs: end-to-end tests spawn bin/govctl.js.
    globalSetup: ['test/global-setup.ts'],
    // end-to-end tests spawn processes and servers; two cores on CI
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results.json' },
  },
});
