/**
 * What two replicas on one PostgreSQL database share at once: API keys (hashed as the SQLite
 * backend hashes them; a revocation or an expiry at one applies to the next request at the other).
 * The auth hook's step (Store.admit: key, request and record budgets across replicas) is proven
 * on both backends in test/server/store-admit.test.ts.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresStore } from '../../../src/server/store/postgres/index.js';
import { openTestStore, withClient } from '../../helpers/postgres.js';

let a: PostgresStore;
let b: PostgresStore;
let url: string;

beforeAll(async () => {
  ({ store: a, url } = await openTestStore('identity'));
  ({ store: b } = await openTestStore('identity', {}, url));
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe('API keys across replicas', () => {
  it('stores only the SHA-256 of a key, as the SQLite backend does', async () => {
    const provisioned = await a.identity.provision({ orgName: 'o', workspaceName: 'w' }, Date.now());
    const stored = await withClient(
      url,
      async (client) => (await client.query('SELECT key_hash FROM api_keys WHERE workspace_id = $1', [provisioned.workspace_id])).rows,
    );
    expect(stored).toEqual([{ key_hash: createHash('sha256').update(provisioned.api_key).digest() }]);
  });

  it('refuses a key revoked at another replica on the very next request', async () => {
    const now = Date.now();
    const provisioned = await a.identity.provision({}, now);
    const created = await a.identity.createApiKey(provisioned.workspace_id, 'ci', null, now);
    expect(await b.identity.authenticate(created!.api_key, now)).toMatchObject({ workspaceId: provisioned.workspace_id, keyId: created!.key_id });
    expect(await a.identity.authenticate(created!.api_key, now)).not.toBeNull();
    const revoked = await a.identity.revokeApiKey(created!.key_id, now + 1);
    expect(revoked).toMatchObject({ revoked: true, revoked_at: new Date(now + 1).toISOString() });
    expect(await b.identity.authenticate(created!.api_key, now + 2)).toBeNull();
    expect(await a.identity.authenticate(created!.api_key, now + 2)).toBeNull();
    // the workspace's first key is untouched
    expect(await b.identity.authenticate(provisioned.api_key, now + 2)).not.toBeNull();
    // revoking again keeps the first revocation's time
    expect((await b.identity.revokeApiKey(created!.key_id, now + 99))!.revoked_at).toBe(new Date(now + 1).toISOString());
    expect(await b.identity.revokeApiKey('key_nope', now)).toBeNull();
  });

  it('refuses an expired key from its expiry on, by the clock of the request', async () => {
    const now = Date.now();
    const provisioned = await a.identity.provision({}, now);
    const created = await a.identity.createApiKey(provisioned.workspace_id, null, now + 1000, now);
    expect(await b.identity.authenticate(created!.api_key, now + 999)).not.toBeNull();
    expect(await b.identity.authenticate(created!.api_key, now + 1000)).toBeNull();
  });

  it('lists keys and knows workspaces whichever replica created them', async () => {
    const provisioned = await b.identity.provision({}, Date.now());
    expect(await a.identity.workspaceExists(provisioned.workspace_id)).toBe(true);
    expect(await a.identity.workspaceExists('ws_nope')).toBe(false);
    expect(await a.identity.createApiKey('ws_nope', null, null, Date.now())).toBeNull();
    const keys = await a.identity.listApiKeys(provisioned.workspace_id);
    expect(keys.map((key) => key.name)).toEqual(['default']);
    expect(JSON.stringify(keys)).not.toContain(provisioned.api_key);
  });
});

describe('admission in batches', () => {
  it('admits the requests that arrive while a batch is in flight together, in one statement', async () => {
    const provisioned = await a.identity.provision({}, Date.now());
    const sent: string[] = [];
    const query = a.pool.query.bind(a.pool) as (...args: unknown[]) => Promise<unknown>;
    (a.pool as { query: unknown }).query = (...args: unknown[]) => {
      const config = args[0] as { name?: string };
      if (config.name === 'govctl_admit') sent.push(String((args[0] as { values: unknown[][] }).values[0].length));
      return query(...args);
    };
    try {
      const at = Date.now();
      const admit = () => a.admit({ apiKey: provisioned.api_key, nowMs: at, budgetNowMs: at, maxRequests: 100, records: 0, maxRecords: 100 });
      // sent together: one statement
      const first = await Promise.all(Array.from({ length: 25 }, admit));
      // one request alone; the 24 that arrive while its statement is in flight go in the next one
      const alone = admit();
      await new Promise((resolve) => setImmediate(resolve));
      expect(sent).toEqual(['25', '1']);
      await Promise.all([alone, ...Array.from({ length: 24 }, admit)]);
      expect(sent).toEqual(['25', '1', '24']);
      expect(first.every((admission) => admission.auth !== null && admission.counted)).toBe(true);
      expect(await admit()).toMatchObject({ requests: { remaining: 100 - 51 } });
    } finally {
      (a.pool as { query: unknown }).query = query;
    }
  });
});
