/**
 * API keys as every backend makes, stores and lists them: keys are random 256-bit secrets, so a
 * store keeps only their SHA-256 (a slow password hash buys nothing against a guess of 2^256), and
 * a database copied from one backend to another keeps its keys.
 */
import { hash as oneShotHash } from 'node:crypto';
import { apiKeyDisplayPrefix, newApiKey, newId } from '../ids.js';
import { isoOrNull, type ApiKeyInfo, type ApiKeyRole, type AuthContext } from './rows.js';

/** The SHA-256 of an API key, as every backend stores and looks it up. */
export function hashApiKey(apiKey: string): Buffer {
  // one-shot (Node ≥ 20.12): one call into the crypto library per request, not three
  return oneShotHash('sha256', apiKey, 'buffer');
}

/** An API key's row as both backends store it (times as epoch ms). */
export interface ApiKeyRow {
  key_id: string;
  key_hash: Buffer;
  prefix: string;
  workspace_id: string;
  user_id: string;
  name: string | null;
  created_ms: number;
  expires_ms: number | null;
  revoked_ms: number | null;
  role: ApiKeyRole;
}

/** A new API key for a workspace's user: the key itself (shown once) and the row that stores its hash. */
export function newApiKeyRow(
  workspaceId: string,
  userId: string,
  name: string | null,
  expiresMs: number | null,
  nowMs: number,
  role: ApiKeyRole,
): { apiKey: string; row: ApiKeyRow } {
  const apiKey = newApiKey();
  return {
    apiKey,
    row: {
      key_id: newId('key'),
      key_hash: hashApiKey(apiKey),
      prefix: apiKeyDisplayPrefix(apiKey),
      workspace_id: workspaceId,
      user_id: userId,
      name,
      created_ms: nowMs,
      expires_ms: expiresMs,
      revoked_ms: null,
      role,
    },
  };
}

export function apiKeyInfo(row: ApiKeyRow): ApiKeyInfo {
  return {
    key_id: row.key_id,
    role: row.role,
    prefix: row.prefix,
    workspace_id: row.workspace_id,
    user_id: row.user_id,
    name: row.name,
    created_at: new Date(row.created_ms).toISOString(),
    expires_at: isoOrNull(row.expires_ms),
    revoked_at: isoOrNull(row.revoked_ms),
    revoked: row.revoked_ms !== null,
  };
}

/** What a key's row, read with its workspace's org (both backends' key statements), admits as. */
export function authContext(row: { key_id: string; workspace_id: string; user_id: string; org_id: string; role: ApiKeyRole }): AuthContext {
  return { keyId: row.key_id, role: row.role, workspaceId: row.workspace_id, userId: row.user_id, orgId: row.org_id };
}
