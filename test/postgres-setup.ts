/**
 * Starts the test run's throw-away PostgreSQL cluster (test/helpers/postgres-cluster.mjs) and
 * stops it when the run ends (its directory goes with the run's TMPDIR: global-setup.ts). Fails the run, naming what to install, when
 * the PostgreSQL binaries are missing: the PostgreSQL tests are never skipped silently. Also makes
 * the run's template database, migrated once (helpers/postgres-template.ts), and a pristine data
 * directory that the files' private clusters copy instead of running initdb each
 * (helpers/postgres.ts startCluster).
 */
import type { TestProject } from 'vitest/node';
import { randomBytes } from 'node:crypto';
import { makePristineDataDirectory, startCluster } from './helpers/postgres-cluster.mjs';
import { createTemplateDatabase } from './helpers/postgres-template.js';

/**
 * Called by the run's global setup (global-setup.ts), while the build runs. Resolves to the
 * teardown, which stops the cluster; its directory goes with the run's TMPDIR.
 */
export async function startRunPostgres(project: TestProject): Promise<() => Promise<void>> {
  const existing = process.env.GOVCTL_TEST_POSTGRES_URL;
  // a name of its own on an existing server, where another run may have made one
  const template = `govctl_template_${randomBytes(4).toString('hex')}`;
  if (existing) {
    await createTemplateDatabase(existing, template);
    project.provide('postgresUrl', existing);
    project.provide('postgresTemplate', template);
    return async () => {};
  }
  const pristine = makePristineDataDirectory();
  const cluster = await startCluster({ pristine: pristine.data }).catch((error: unknown) => {
    pristine.remove();
    throw error;
  });
  await createTemplateDatabase(cluster.url(), template).catch(async (error: unknown) => {
    await cluster.kill('SIGQUIT');
    throw error;
  });
  project.provide('postgresUrl', cluster.url());
  project.provide('postgresTemplate', template);
  project.provide('postgresPristine', pristine.data);
  // for processes the tests spawn
  process.env.GOVCTL_TEST_POSTGRES_URL = cluster.url();
  return async () => {
    delete process.env.GOVCTL_TEST_POSTGRES_URL;
    await cluster.kill('SIGQUIT');
  };
}
