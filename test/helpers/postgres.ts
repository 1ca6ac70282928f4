/**
 * PostgreSQL for tests: one throw-away cluster per test run (started by the global setup,
 * test/postgres-setup.ts, through postgres-cluster.mjs), and a fresh database per test file, so that
 * files share no rows. The cluster's URL reaches test files through vitest's `provide`/`inject`
 * and spawned processes through GOVCTL_TEST_POSTGRES_URL.
 *
 * GOVCTL_TEST_POSTGRES_URL set before the run points the tests at an existing server instead (a
 * superuser's URL: each file creates its own database there); nothing is started then.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { startCluster, type PostgresCluster } from './postgres-cluster.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** the shared cluster's superuser URL (its `postgres` database) */
    postgresUrl: string;
  }
}

export { startCluster, PostgresCluster };

/** The shared cluster's superuser URL. */
export function clusterUrl(): string {
  const url = inject('postgresUrl') ?? process.env.GOVCTL_TEST_POSTGRES_URL;
  if (!url) throw new Error('no PostgreSQL cluster: test/postgres-setup.ts is not in vitest.config.ts globalSetup');
  return url;
}

/** `url` with its database replaced by `database`. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * A new empty database on the shared cluster, named for `label` and a random suffix, and its URL.
 * Each test file takes its own (or one per test where tests must not see each other's rows).
 */
export async function freshDatabase(label = 'test'): Promise<string> {
  const name = `t_${label.toLowerCase().replace(/[^a-z0-9]+/g, '_').slice(0, 30)}_${randomBytes(6).toString('hex')}`;
  const url = clusterUrl();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return withDatabase(url, name);
}

/** Runs `fn` with one connection to `url`, closed afterwards. */
export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
