/** openStore picks the backend from the location, in one place (store/open-store.ts). */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claimForServing, openStore } from '../../src/server/store/open-store.js';
import { PostgresStore } from '../../src/server/store/postgres/index.js';
import { SqliteStore } from '../../src/server/store/sqlite/store.js';
import { createApp } from '../../src/server/app.js';
import { listApiKeys, provision } from '../../src/server/admin.js';
import { closedPort } from '../helpers/ports.js';
import { freshDatabase } from '../helpers/postgres.js';

describe('openStore', () => {
  it('opens a file path or :memory: as SQLite, ready for requests', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'govctl-open-store-'));
    try {
      for (const location of [':memory:', join(dir, 'a.db')]) {
        const store = await openStore(location);
        try {
          expect(store).toBeInstanceOf(SqliteStore);
          expect(store.backend).toBe('sqlite');
          expect(await store.ready()).toBe(true);
        } finally {
          await store.close();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens a postgres:// or postgresql:// URL as PostgreSQL, for the service and admin alike, and never makes a file of it', async () => {
    const url = await freshDatabase('open store');
    for (const location of [url, url.replace(/^postgres:/, 'postgresql:'), url.replace(/^postgres:/, 'POSTGRES:')]) {
      const store = await openStore(location);
      try {
        expect(store).toBeInstanceOf(PostgresStore);
        expect(store.backend).toBe('postgres');
        expect(await store.ready()).toBe(true);
      } finally {
        await store.close();
      }
    }
    const provisioned = await provision(url, { orgName: 'o' });
    expect((await listApiKeys(url)).map((key) => key.workspace_id)).toEqual([provisioned.workspace_id]);
    const service = await createApp({ db: url });
    try {
      const reply = await service.app.inject({ method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${provisioned.api_key}` } });
      expect(reply.statusCode).toBe(200);
    } finally {
      await service.close();
    }
    // replicas share the database: nothing to claim, for any number of them
    claimForServing(url).release();
    claimForServing(url).release();
    // SQLite would have taken the URL for a relative path
    expect(existsSync('postgres:')).toBe(false);
    expect(existsSync('postgresql:')).toBe(false);
  });

  it('refuses a PostgreSQL URL where nothing listens, naming no password', async () => {
    const location = `postgres://u:secret-password@127.0.0.1:${await closedPort()}/db`;
    const failure = await openStore(location).then(
      () => null,
      (error: unknown) => error as Error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(String(failure?.message)).toMatch(/ECONNREFUSED/);
    expect(String(failure?.message)).not.toContain('secret-password');
  });
});
