/**
 * Each workspace's registry of verifying keys and its key policy (docs/security.md): under `open`
 * (the default, the specification's behaviour) any valid `witness_sig` earns `witnessed`; under
 * `registered` only a canonical-form signature by a registered, unrevoked key does. Public keys
 * only: the registry holds nothing secret.
 */
import type Database from 'better-sqlite3';
import { signingKeyInfo, type KeyPolicy, type SigningKeyInfo, type SigningKeyRow } from '../rows.js';
import type { Db } from './database.js';
import type * as Interface from '../store.js';

export class SigningKeyStore implements Interface.SigningKeyStore {
  readonly #policy: Database.Statement<[string], string>;
  readonly #key: Database.Statement<[string, string], SigningKeyRow>;

  constructor(private readonly db: Db) {
    this.#policy = db.prepare<[string], string>('SELECT policy FROM witness_policy WHERE workspace_id = ?').pluck();
    this.#key = db.prepare('SELECT * FROM signing_keys WHERE workspace_id = ? AND fingerprint = ?');
  }

  /** The workspace's key policy (`open` unless set). */
  async policy(workspaceId: string): Promise<KeyPolicy> {
    return (this.#policy.get(workspaceId) as KeyPolicy | undefined) ?? 'open';
  }

  async setPolicy(workspaceId: string, policy: KeyPolicy, nowMs: number): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO witness_policy (workspace_id, policy, updated_ms) VALUES (?, ?, ?)
         ON CONFLICT (workspace_id) DO UPDATE SET policy = excluded.policy, updated_ms = excluded.updated_ms`,
      )
      .run(workspaceId, policy, nowMs);
  }

  /** A key of the workspace by fingerprint: `active`, `revoked`, or `unregistered`. */
  async status(workspaceId: string, fingerprint: string): Promise<'active' | 'revoked' | 'unregistered'> {
    const row = this.#key.get(workspaceId, fingerprint);
    return row === undefined ? 'unregistered' : row.revoked_ms === null ? 'active' : 'revoked';
  }

  async get(workspaceId: string, fingerprint: string): Promise<SigningKeyInfo | undefined> {
    const row = this.#key.get(workspaceId, fingerprint);
    return row === undefined ? undefined : signingKeyInfo(row);
  }

  async add(workspaceId: string, fingerprint: string, publicKey: string, name: string | null, nowMs: number): Promise<void> {
    this.db
      .prepare('INSERT INTO signing_keys (workspace_id, fingerprint, public_key, name, created_ms) VALUES (?, ?, ?, ?, ?)')
      .run(workspaceId, fingerprint, publicKey, name, nowMs);
  }

  /** Marks a key revoked (the first revocation's time stays). */
  async revoke(workspaceId: string, fingerprint: string, nowMs: number): Promise<void> {
    this.db
      .prepare('UPDATE signing_keys SET revoked_ms = coalesce(revoked_ms, ?) WHERE workspace_id = ? AND fingerprint = ?')
      .run(nowMs, workspaceId, fingerprint);
  }

  async list(workspaceId: string): Promise<SigningKeyInfo[]> {
    return (this.db.prepare('SELECT * FROM signing_keys WHERE workspace_id = ? ORDER BY created_ms, fingerprint').all(workspaceId) as SigningKeyRow[]).map(
      signingKeyInfo,
    );
  }
}
