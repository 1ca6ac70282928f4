/**
 * Starts the test run's throw-away PostgreSQL cluster (test/helpers/postgres-cluster.mjs) and
 * stops it, its directory removed, when the run ends. Fails the run, naming what to install, when
 * the PostgreSQL binaries are missing: the PostgreSQL tests are never skipped silently.
 */
import type { TestProject } from 'vitest/node';
import { startCluster } from './helpers/postgres-cluster.mjs';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const existing = process.env.GOVCTL_TEST_POSTGRES_URL;
  if (existing) {
    project.provide('postgresUrl', existing);
    return async () => {};
  }
  const cluster = await startCluster();
  project.provide('postgresUrl', cluster.url());
  // for processes the tests spawn
  process.env.GOVCTL_TEST_POSTGRES_URL = cluster.url();
  return async () => {
    delete process.env.GOVCTL_TEST_POSTGRES_URL;
    await cluster.stop();
  };
}
