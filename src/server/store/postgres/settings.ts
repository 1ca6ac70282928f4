/**
 * The small per-workspace tables on PostgreSQL: systems (read; written by the group commit, see
 * derived.ts) and the verifying-key registry (the gate policy is logged: gate-policy.ts). Each statement stands alone: what one
 * replica sets, the next request at any replica reads.
 */
import type pg from 'pg';
import { signingKeyInfo, type KeyPolicy, type SigningKeyInfo, type SigningKeyRow, type SystemRow } from '../rows.js';
import type { SigningKeyStore, SystemReads } from '../store.js';
import { holdsNul } from './pool.js';

const SYSTEM_COLUMNS = 'system_id, name, registered, risk_tier, last_evidence_ms, last_attested_ms, record_count, record_types, controls';

export class PgSystemReads implements SystemReads {
  constructor(private readonly pool: pg.Pool) {}

  async list(workspaceId: string, nameContains?: string): Promise<SystemRow[]> {
    if (holdsNul(nameContains)) return [];
    // COLLATE "C": by code point, as SQLite's BINARY orders them, whatever the database's locale.
    const { rows } =
      nameContains === undefined || nameContains === ''
        ? await this.pool.query<SystemRow>(`SELECT ${SYSTEM_COLUMNS} FROM systems WHERE workspace_id = $1 ORDER BY name COLLATE "C"`, [workspaceId])
        : // lower() of ASCII only would be SQLite's; translate() folds exactly A–Z, whatever the locale
          await this.pool.query<SystemRow>(
            `SELECT ${SYSTEM_COLUMNS} FROM systems WHERE workspace_id = $1
               AND strpos(translate(name, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'),
                          translate($2, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')) > 0
             ORDER BY name COLLATE "C"`,
            [workspaceId, nameContains],
          );
    return rows;
  }

  async get(workspaceId: string, name: string): Promise<SystemRow | undefined> {
    if (holdsNul(name)) return undefined;
    const { rows } = await this.pool.query<SystemRow>(`SELECT ${SYSTEM_COLUMNS} FROM systems WHERE workspace_id = $1 AND name = $2`, [workspaceId, name]);
    return rows[0];
  }

  async countUnattestedSince(workspaceId: string, sinceMs: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      'SELECT count(*) AS n FROM systems WHERE workspace_id = $1 AND (last_attested_ms IS NULL OR last_attested_ms < $2)',
      [workspaceId, sinceMs],
    );
    return rows[0].n;
  }
}

export class PgSigningKeyStore implements SigningKeyStore {
  constructor(private readonly pool: pg.Pool) {}

  async policy(workspaceId: string): Promise<KeyPolicy> {
    const { rows } = await this.pool.query<{ policy: KeyPolicy }>('SELECT policy FROM witness_policy WHERE workspace_id = $1', [workspaceId]);
    return rows[0]?.policy ?? 'open';
  }

  async setPolicy(workspaceId: string, policy: KeyPolicy, nowMs: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO witness_policy (workspace_id, policy, updated_ms) VALUES ($1, $2, $3)
       ON CONFLICT (workspace_id) DO UPDATE SET policy = excluded.policy, updated_ms = excluded.updated_ms`,
      [workspaceId, policy, nowMs],
    );
  }

  async #row(workspaceId: string, fingerprint: string): Promise<SigningKeyRow | undefined> {
    const { rows } = await this.pool.query<SigningKeyRow>('SELECT * FROM signing_keys WHERE workspace_id = $1 AND fingerprint = $2', [
      workspaceId,
      fingerprint,
    ]);
    return rows[0];
  }

  async status(workspaceId: string, fingerprint: string): Promise<'active' | 'revoked' | 'unregistered'> {
    const row = await this.#row(workspaceId, fingerprint);
    return row === undefined ? 'unregistered' : row.revoked_ms === null ? 'active' : 'revoked';
  }

  async get(workspaceId: string, fingerprint: string): Promise<SigningKeyInfo | undefined> {
    const row = await this.#row(workspaceId, fingerprint);
    return row === undefined ? undefined : signingKeyInfo(row);
  }

  async add(workspaceId: string, fingerprint: string, publicKey: string, name: string | null, nowMs: number): Promise<void> {
    await this.pool.query('INSERT INTO signing_keys (workspace_id, fingerprint, public_key, name, created_ms) VALUES ($1, $2, $3, $4, $5)', [
      workspaceId,
      fingerprint,
      publicKey,
      name,
      nowMs,
    ]);
  }

  async revoke(workspaceId: string, fingerprint: string, nowMs: number): Promise<void> {
    await this.pool.query('UPDATE signing_keys SET revoked_ms = coalesce(revoked_ms, $1) WHERE workspace_id = $2 AND fingerprint = $3', [
      nowMs,
      workspaceId,
      fingerprint,
    ]);
  }

  async list(workspaceId: string): Promise<SigningKeyInfo[]> {
    const { rows } = await this.pool.query<SigningKeyRow>('SELECT * FROM signing_keys WHERE workspace_id = $1 ORDER BY created_ms, fingerprint COLLATE "C"', [
      workspaceId,
    ]);
    return rows.map(signingKeyInfo);
  }
}
