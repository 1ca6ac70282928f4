/**
 * The run's template database: an empty database with the PostgreSQL store's migrations applied,
 * made once by the global setup (test/postgres-setup.ts). A test that wants a store copies it
 * (`CREATE DATABASE x TEMPLATE govctl_template`, helpers/postgres.ts freshMigratedDatabase)
 * instead of migrating a new database itself. Tests of the migrations start from an empty
 * database (freshDatabase) and never from this one.
 */
import pg from 'pg';
import { migrate } from '../../src/server/store/postgres/migrate.js';

/** Creates `name` on the cluster at `url` (a superuser's URL) and migrates it; no session stays on it. */
export async function createTemplateDatabase(url: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const target = new URL(url);
  target.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: target.toString() });
  await client.connect();
  try {
    await migrate(client);
  } finally {
    await client.end();
  }
}
