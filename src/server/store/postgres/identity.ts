/**
 * Organisations, workspaces, users and API keys on PostgreSQL. Keys are stored as the SQLite
 * backend stores them (hashApiKey: SHA-256), so a database copied from SQLite keeps its keys.
 *
 * `authenticate` reads the key's row on every request (one indexed point read, no cache): a
 * revocation or expiry done by any replica, or by `govctl admin` anywhere, applies to the very next
 * request at every replica. No LISTEN/NOTIFY (a transaction-mode pooler breaks it), no cache to go
 * stale.
 */
import { timingSafeEqual } from 'node:crypto';
import type pg from 'pg';
import { newId } from '../../ids.js';
import { apiKeyInfo, authContext, hashApiKey, newApiKeyRow, type ApiKeyRow } from '../api-keys.js';
import type { ApiKeyInfo, ApiKeyRole, AuthContext, CreatedApiKey, ProvisionOptions, Provisioned } from '../rows.js';
import type { IdentityStore } from '../store.js';
import { storeError } from './pool.js';

const INSERT_KEY =
  'INSERT INTO api_keys (key_id, key_hash, prefix, workspace_id, user_id, name, created_ms, expires_ms, role) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)';
const OWNER = `SELECT w.org_id, (SELECT u.user_id FROM users u WHERE u.org_id = w.org_id ORDER BY u.created_ms, u.user_id LIMIT 1) AS user_id
  FROM workspaces w WHERE w.workspace_id = $1`;

export class PgIdentityStore implements IdentityStore {
  constructor(private readonly pool: pg.Pool) {}

  async provision(options: ProvisionOptions, nowMs: number): Promise<Provisioned> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const orgId = newId('org');
      const workspaceId = newId('ws');
      const userId = newId('usr');
      await client.query('INSERT INTO orgs (org_id, name, created_ms) VALUES ($1, $2, $3)', [orgId, options.orgName ?? 'default', nowMs]);
      await client.query('INSERT INTO workspaces (workspace_id, org_id, name, created_ms) VALUES ($1, $2, $3, $4)', [
        workspaceId,
        orgId,
        options.workspaceName ?? 'default',
        nowMs,
      ]);
      // the workspace's integer key, and its log's head at leaf 0
      await client.query(
        `WITH k AS (INSERT INTO workspace_keys (workspace_id) VALUES ($1) RETURNING ws_key)
         INSERT INTO ledger_heads (ws_key, next_index) SELECT ws_key, 0 FROM k`,
        [workspaceId],
      );
      await client.query('INSERT INTO users (user_id, org_id, email, created_ms) VALUES ($1, $2, $3, $4)', [userId, orgId, options.userEmail ?? null, nowMs]);
      const key = await this.#addKey(client, workspaceId, userId, 'default', null, nowMs, 'writer');
      await client.query('COMMIT');
      return { org_id: orgId, workspace_id: workspaceId, user_id: userId, api_key: key.api_key };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      broken = error as Error;
      throw storeError(error);
    } finally {
      // a connection that failed is closed, not handed out again
      client.release(broken);
    }
  }

  async createApiKey(
    workspaceId: string,
    name: string | null,
    expiresMs: number | null,
    nowMs: number,
    role: ApiKeyRole = 'writer',
  ): Promise<CreatedApiKey | null> {
    const { rows } = await this.pool.query<{ org_id: string; user_id: string | null }>(OWNER, [workspaceId]);
    const owner = rows[0];
    if (!owner || owner.user_id === null) return null;
    return this.#addKey(this.pool, workspaceId, owner.user_id, name, expiresMs, nowMs, role);
  }

  async #addKey(
    on: Pick<pg.ClientBase, 'query'>,
    workspaceId: string,
    userId: string,
    name: string | null,
    expiresMs: number | null,
    nowMs: number,
    role: ApiKeyRole,
  ): Promise<CreatedApiKey> {
    const { apiKey, row } = newApiKeyRow(workspaceId, userId, name, expiresMs, nowMs, role);
    await on.query(INSERT_KEY, [row.key_id, row.key_hash, row.prefix, workspaceId, userId, name, nowMs, expiresMs, role]);
    return { ...apiKeyInfo(row), api_key: apiKey };
  }

  async listApiKeys(workspaceId?: string): Promise<ApiKeyInfo[]> {
    const { rows } =
      workspaceId === undefined
        ? await this.pool.query<ApiKeyRow>('SELECT * FROM api_keys ORDER BY created_ms, key_id COLLATE "C"')
        : await this.pool.query<ApiKeyRow>('SELECT * FROM api_keys WHERE workspace_id = $1 ORDER BY created_ms, key_id COLLATE "C"', [workspaceId]);
    return rows.map(apiKeyInfo);
  }

  async revokeApiKey(keyId: string, nowMs: number): Promise<ApiKeyInfo | null> {
    // coalesce: revoking a revoked key changes nothing; one statement, so it answers the key as it now stands
    const { rows } = await this.pool.query<ApiKeyRow>('UPDATE api_keys SET revoked_ms = coalesce(revoked_ms, $1) WHERE key_id = $2 RETURNING *', [
      nowMs,
      keyId,
    ]);
    return rows[0] ? apiKeyInfo(rows[0]) : null;
  }

  async workspaceIds(): Promise<string[]> {
    const { rows } = await this.pool.query<{ workspace_id: string }>('SELECT workspace_id FROM workspace_keys ORDER BY ws_key');
    return rows.map((row) => row.workspace_id);
  }

  async workspaceExists(workspaceId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM workspaces WHERE workspace_id = $1', [workspaceId]);
    return rowCount === 1;
  }

  async authenticate(apiKey: string, nowMs: number): Promise<AuthContext | null> {
    const hash = hashApiKey(apiKey);
    const { rows } = await this.pool.query<ApiKeyRow & { org_id: string }>({
      name: 'govctl_authenticate',
      text: 'SELECT k.*, w.org_id FROM api_keys k JOIN workspaces w ON w.workspace_id = k.workspace_id WHERE k.key_hash = $1',
      values: [hash],
    });
    const row = rows[0];
    if (!row || !timingSafeEqual(row.key_hash, hash)) return null;
    if (row.revoked_ms !== null) return null;
    if (row.expires_ms !== null && row.expires_ms <= nowMs) return null;
    return authContext(row);
  }
}
