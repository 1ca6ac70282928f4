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
import { startCluster as startPostgresCluster, type PostgresCluster } from './postgres-cluster.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** the shared cluster's superuser URL (its `postgres` database) */
    postgresUrl: string;
    /** the run's migrated template database (helpers/postgres-template.ts) */
    postgresTemplate: string;
    /** a data directory fresh from initdb, never run (absent when the run uses an existing server) */
    postgresPristine?: string;
  }
}

export type { PostgresCluster };

/**
 * A private cluster, for a file that kills or reconfigures its server: started from a copy of the
 * run's pristine data directory (test/postgres-setup.ts) instead of its own initdb, which costs
 * more than ten times the CPU; with initdb where the run has none.
 */
export function startCluster(options: { settings?: Record<string, string | number> } = {}): Promise<PostgresCluster> {
  return startPostgresCluster({ ...options, pristine: inject('postgresPristine') });
}

/** The shared cluster's superuser URL. */
export function clusterUrl(): string {
  const url = inject('postgresUrl') ?? process.env.GOVCTL_TEST_POSTGRES_URL;
  if (!url) throw new Error('no PostgreSQL cluster: test/global-setup.ts is not in vitest.config.ts globalSetup');
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
  return createDatabase(label, null);
}

/**
 * A new database with the store's schema already migrated (a copy of the run's template database,
 * cheaper than migrating each one), and its URL: what a test that only wants a store takes.
 */
export async function freshMigratedDatabase(label = 'test'): Promise<string> {
  const template = inject('postgresTemplate');
  if (!template) throw new Error('no template database: test/global-setup.ts is not in vitest.config.ts globalSetup');
  return createDatabase(label, template);
}

async function createDatabase(label: string, template: string | null): Promise<string> {
  const name = `t_${label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 30)}_${randomBytes(6).toString('hex')}`;
  const url = clusterUrl();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}${template === null ? '' : ` TEMPLATE ${template}`}`);
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

/** Options of a PostgreSQL store opened by {@link openTestStore}. */
export type TestStoreOptions = import('../../src/server/store/postgres/index.js').PostgresStoreOptions;

/**
 * A PostgreSQL store on a fresh database (or on `url`, a second replica of the same database).
 * Closed by the caller.
 */
export async function openTestStore(label: string, options: TestStoreOptions = {}, url?: string) {
  const { openPostgresStore } = await import('../../src/server/store/postgres/index.js');
  const target = url ?? (await freshDatabase(label));
  const store = await openPostgresStore(target, options);
  return { store, url: target };
}

/** An evidence write as the routes build it (controls and time chosen by the test). */
export function evidenceWrite(
  workspaceId: string,
  n: number,
  overrides: Partial<import('../../src/server/store/rows.js').EvidenceRow> = {},
  extra: { controls?: string[]; riskTier?: string; claim?: { key: string; hash: string } } = {},
): import('../../src/server/store/store.js').EvidenceWrite {
  const occurredMs = Date.UTC(2026, 0, 1) + n * 1000;
  const controls = extra.controls ?? ['EU-AI-ACT-ART-12'];
  return {
    row: {
      record_id: `rec_test-${String(n).padStart(6, '0')}-${randomBytes(4).toString('hex')}`,
      workspace_id: workspaceId,
      record_type: 'ai_model_inventory',
      system_name: `system-${n % 3}`,
      identity: null,
      resource: null,
      environment: null,
      occurred_at: new Date(occurredMs).toISOString(),
      occurred_ms: occurredMs,
      payload: `{"n":${n}}`,
      client_sig: null,
      client_sig_algo: null,
      source: 'test',
      mapped_controls: JSON.stringify(controls),
      received_at: new Date(occurredMs + 500).toISOString(),
      received_ms: occurredMs + 500,
      ...overrides,
    },
    controls,
    ...(extra.riskTier !== undefined ? { riskTier: extra.riskTier } : {}),
    ...(extra.claim !== undefined ? { claim: extra.claim } : {}),
  };
}
