/**
 * Starts the test run's throw-away PostgreSQL cluster (test/helpers/postgres-cluster.mjs) and
 * stops it, its directory removed, when the run ends. Fails the run, naming what to install, when
 * the PostgreSQL binaries are missing: the PostgreSQL tests are never skipped silently. Also makes
 * the run's template database, migrated once (helpers/postgres-template.ts), and a pristine data
 * directory that the files' private clusters copy instead of running initdb each
 * (helpers/postgres.ts startCluster).
 */
import type { TestProject } from 'vitest/node';
import { randomBytes } from 'node:crypto';
import { makePristineDataDirectory, startCluster } from './helpers/postgres-cluster.mjs';
import { createTemplateDatabase } from './helpers/postgres-template.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
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
  await createTemplateDatabase(cluster.url(), template);
  project.provide('postgresUrl', cluster.url());
  project.provide('postgresTemplate', template);
  project.provide('postgresPristine', pristine.data);
  // for processes the tests spawn
  process.env.GOVCTL_TEST_POSTGRES_URL = cluster.url();
  return async () => {
    delete process.env.GOVCTL_TEST_POSTGRES_URL;
    // Stopped here, removed with the rest of the run's TMPDIR by global-setup.ts's teardown,
    // which runs after this one.
    await cluster.kill('SIGQUIT');
  };
}
