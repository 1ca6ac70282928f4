/**
 * The API key cache of IdentityStore.authenticate: valid keys are remembered while no other
 * connection has changed the database (PRAGMA data_version, read on every request), so a
 * revocation elsewhere and an expiry both take effect on the very next request.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../src/server/index.js';
import { openDatabase, type Db } from '../../src/server/store/sqlite/database.js';
import { IdentityStore, KEY_CACHE_SIZE } from '../../src/server/store/sqlite/identity.js';
import { sqliteOnly } from '../helpers/backend.js';

let dir: string;
let dbPath: string;
let db: Db;
let identity: IdentityStore;
let workspaceId: string;
let apiKey: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'govctl-key-cache-'));
  dbPath = join(dir, 'keys.db');
  db = openDatabase(dbPath);
  identity = new IdentityStore(db);
  ({ workspace_id: workspaceId, api_key: apiKey } = await identity.provision({}, Date.now()));
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

// SQLite-only: the cache of SQLite's IdentityStore and PRAGMA data_version. PostgreSQL's key
// revocation and expiry at every replica: test/server/postgres/identity-and-budget.test.ts.
describe.skipIf(sqliteOnly)('API key cache', () => {
  it('answers a known key from the cache while no other connection has written', async () => {
    const first = await identity.authenticate(apiKey, Date.now());
    expect(first).toMatchObject({ workspaceId });
    // A change made behind the store's back on its OWN connection does not move data_version:
    // the cached identity is still answered after the next check, which shows the cache is in use.
    db.prepare('UPDATE api_keys SET revoked_ms = 1').run();
    expect(await identity.authenticate(apiKey, Date.now())).toEqual(first);
  });

  it('drops the cache when another connection revokes a key: 401 on the very next request', async () => {
    const key = await createApiKey(dbPath, { workspaceId, name: 'other connection' });
    expect(await identity.authenticate(key.api_key, Date.now())).not.toBeNull();
    await revokeApiKey(dbPath, key.key_id); // opens its own connection, as `govctl admin api-key revoke` does
    expect(await identity.authenticate(key.api_key, Date.now())).toBeNull();
    expect(await identity.authenticate(apiKey, Date.now())).not.toBeNull();
  });

  it('drops the cache when another process revokes a key', async () => {
    const key = await createApiKey(dbPath, { workspaceId, name: 'other process' });
    expect(await identity.authenticate(key.api_key, Date.now())).not.toBeNull();
    const script = `const D = require('better-sqlite3'); const db = new D(process.argv[1]); db.pragma('busy_timeout = 5000');
      db.prepare('UPDATE api_keys SET revoked_ms = ? WHERE key_id = ?').run(Date.now(), process.argv[2]); db.close();`;
    execFileSync(process.execPath, ['-e', script, dbPath, key.key_id], { cwd: process.cwd(), stdio: 'pipe' });
    expect(await identity.authenticate(key.api_key, Date.now())).toBeNull();
  });

  it('a revocation through the same store takes effect at once', async () => {
    const key = (await identity.createApiKey(workspaceId, 'same store', null, Date.now()))!;
    expect(await identity.authenticate(key.api_key, Date.now())).not.toBeNull();
    await identity.revokeApiKey(key.key_id, Date.now());
    expect(await identity.authenticate(key.api_key, Date.now())).toBeNull();
  });

  it('a cached key stops working when it expires', async () => {
    const now = Date.now();
    const key = (await identity.createApiKey(workspaceId, 'expiring', now + 60_000, now))!;
    expect(await identity.authenticate(key.api_key, now)).not.toBeNull(); // cached now
    expect(await identity.authenticate(key.api_key, now + 59_999)).not.toBeNull();
    expect(await identity.authenticate(key.api_key, now + 60_000)).toBeNull();
    expect(await identity.authenticate(key.api_key, now + 120_000)).toBeNull();
  });

  it('never caches unknown keys and stays bounded with many valid ones', async () => {
    for (let i = 0; i < 50; i += 1) expect(await identity.authenticate(`gk_unknown${i}`, Date.now())).toBeNull();
    const created = db.transaction(() => Array.from({ length: KEY_CACHE_SIZE + 5 }, (_, i) => identity.createApiKey(workspaceId, `k${i}`, null, Date.now())))();
    const keys = (await Promise.all(created)).map((key) => key!.api_key);
    for (const key of keys) expect(await identity.authenticate(key, Date.now())).toMatchObject({ workspaceId });
    for (const key of keys) expect(await identity.authenticate(key, Date.now())).toMatchObject({ workspaceId });
    expect(await identity.authenticate(`${apiKey}x`, Date.now())).toBeNull();
  });
});
