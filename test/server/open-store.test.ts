/** openStore picks the backend from the location, in one place (store/open-store.ts). */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claimForServing, openStore, StoreUnavailableError } from '../../src/server/store/open-store.js';
import { SqliteStore } from '../../src/server/store/sqlite/store.js';
import { createApp } from '../../src/server/app.js';
import { provision } from '../../src/server/admin.js';

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

  it('refuses a PostgreSQL URL as not available yet, from the service, serve and admin alike, and never makes a file of it', async () => {
    for (const location of ['postgres://u@127.0.0.1:1/db', 'postgresql://127.0.0.1:1/db', 'POSTGRES://127.0.0.1:1/db']) {
      await expect(openStore(location)).rejects.toThrow(StoreUnavailableError);
      await expect(openStore(location)).rejects.toThrow(/PostgreSQL is not available yet/);
    }
    expect(() => claimForServing('postgres://127.0.0.1:1/db')).toThrow(StoreUnavailableError);
    await expect(createApp({ db: 'postgres://127.0.0.1:1/db' })).rejects.toThrow(StoreUnavailableError);
    await expect(provision('postgresql://127.0.0.1:1/db')).rejects.toThrow(StoreUnavailableError);
    // SQLite would have taken the URL for a relative path
    expect(existsSync('postgres:')).toBe(false);
    expect(existsSync('postgresql:')).toBe(false);
  });
});
