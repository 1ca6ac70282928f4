import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AdminError, createApiKey, getGatePolicy, listApiKeys, provision, resetGatePolicy, revokeApiKey, setGatePolicy } from '../../src/server/index.js';
import { sqliteOnly, storedRows, testStoreLocation } from '../helpers/backend.js';

let dir: string;
let dbPath: string;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'govctl-admin-'));
  dbPath = await testStoreLocation('admin', dir);
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('provision', () => {
  it('adds another organisation, workspace, user and key on every call', async () => {
    const first = await provision(dbPath, { orgName: 'Acme', workspaceName: 'prod', userEmail: 'a@example.com' });
    const second = await provision(dbPath);
    expect(first.org_id).toMatch(/^org_/);
    expect(first.workspace_id).toMatch(/^ws_/);
    expect(first.user_id).toMatch(/^usr_/);
    expect(first.api_key).toMatch(/^gk_[A-Za-z0-9_-]{43}$/);
    for (const key of ['org_id', 'workspace_id', 'user_id', 'api_key'] as const) expect(second[key]).not.toBe(first[key]);
  });

  // SQLite-only: the file's mode and journal. PostgreSQL's files are the server's.
  it.skipIf(sqliteOnly)('creates the database file readable by its owner only, in WAL mode', async () => {
    await provision(dbPath);
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(dbPath, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
    expect(statSync(dbPath).mode & 0o777).toBe(0o600);
  });

  it('never stores a key in clear', async () => {
    const { api_key } = await provision(dbPath);
    const rows = await storedRows(dbPath, 'SELECT * FROM api_keys');
    expect(rows.length).toBe(1);
    expect(JSON.stringify(rows)).not.toContain(api_key.slice(11));
  });
});

describe('API keys', () => {
  it('creates, lists (without the key) and revokes keys', async () => {
    const ws = await provision(dbPath);
    const other = await provision(dbPath);
    const created = await createApiKey(dbPath, { workspaceId: ws.workspace_id, name: 'ci', expiresAt: '2030-01-01T00:00:00Z' });
    expect(created.api_key).toMatch(/^gk_/);
    expect(created).toMatchObject({ workspace_id: ws.workspace_id, name: 'ci', expires_at: '2030-01-01T00:00:00.000Z', revoked: false, revoked_at: null });
    expect(created.prefix).toBe(created.api_key.slice(0, 11));

    const listed = await listApiKeys(dbPath, { workspaceId: ws.workspace_id });
    expect(listed.map((k) => k.key_id)).toEqual(expect.arrayContaining([created.key_id]));
    expect(listed).toHaveLength(2);
    expect(JSON.stringify(listed)).not.toContain(created.api_key);
    expect(Object.keys(listed[0]).sort()).toEqual([
      'created_at',
      'expires_at',
      'key_id',
      'name',
      'prefix',
      'revoked',
      'revoked_at',
      'role',
      'user_id',
      'workspace_id',
    ]);
    expect(await listApiKeys(dbPath)).toHaveLength(3);
    expect(await listApiKeys(dbPath, { workspaceId: other.workspace_id })).toHaveLength(1);

    const revoked = await revokeApiKey(dbPath, created.key_id);
    expect(revoked.revoked).toBe(true);
    expect(typeof revoked.revoked_at).toBe('string');
    expect((await revokeApiKey(dbPath, created.key_id)).revoked_at).toBe(revoked.revoked_at);
  });

  it('refuses an unknown workspace, an unknown key and a bad expiry with AdminError', async () => {
    await provision(dbPath);
    await expect(createApiKey(dbPath, { workspaceId: 'ws_nope' })).rejects.toThrow(AdminError);
    await expect(revokeApiKey(dbPath, 'key_nope')).rejects.toThrow(expect.objectContaining({ code: 'not_found' }));
    await expect(createApiKey(dbPath, { workspaceId: 'ws_nope', expiresAt: 'soon' })).rejects.toThrow(
      expect.objectContaining({ code: 'invalid', field: 'expiresAt' }),
    );
  });
});

describe('gate policy', () => {
  it('reports the defaults, sets one framework at a time and resets it', async () => {
    const { workspace_id: workspaceId } = await provision(dbPath);
    const defaults = await getGatePolicy(dbPath, { workspaceId });
    expect(defaults).toEqual([
      { framework: 'eu_ai_act', mode: 'required', threshold: 80, source: 'default' },
      { framework: 'iso_42001', mode: 'advisory', threshold: 70, source: 'default' },
      { framework: 'soc2_type2', mode: 'advisory', threshold: 70, source: 'default' },
      { framework: 'iso_27001', mode: 'advisory', threshold: 70, source: 'default' },
      { framework: 'nist_airf', mode: 'advisory', threshold: 70, source: 'default' },
    ]);
    const after = await setGatePolicy(dbPath, { workspaceId, framework: 'soc2_type2', threshold: 55.5 });
    expect(after[2]).toEqual({ framework: 'soc2_type2', mode: 'advisory', threshold: 55.5, source: 'workspace' });
    await setGatePolicy(dbPath, { workspaceId, framework: 'soc2_type2', mode: 'required' });
    expect((await getGatePolicy(dbPath, { workspaceId }))[2]).toEqual({ framework: 'soc2_type2', mode: 'required', threshold: 55.5, source: 'workspace' });
    expect(await resetGatePolicy(dbPath, { workspaceId, framework: 'soc2_type2' })).toEqual(defaults);
  });

  it('refuses an unknown framework, mode, a threshold outside 0–100 and an unknown workspace', async () => {
    const { workspace_id: workspaceId } = await provision(dbPath);
    await expect(setGatePolicy(dbPath, { workspaceId, framework: 'gdpr' as never, mode: 'required' })).rejects.toThrow(
      expect.objectContaining({ code: 'invalid', field: 'framework' }),
    );
    await expect(setGatePolicy(dbPath, { workspaceId, framework: 'eu_ai_act', mode: 'strict' as never })).rejects.toThrow(
      expect.objectContaining({ code: 'invalid', field: 'mode' }),
    );
    await expect(setGatePolicy(dbPath, { workspaceId, framework: 'eu_ai_act', threshold: 101 })).rejects.toThrow(
      expect.objectContaining({ code: 'invalid', field: 'threshold' }),
    );
    await expect(setGatePolicy(dbPath, { workspaceId: 'ws_nope', framework: 'eu_ai_act', threshold: 1 })).rejects.toThrow(
      expect.objectContaining({ code: 'not_found' }),
    );
  });
});
