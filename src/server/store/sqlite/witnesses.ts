/**
 * The witnesses registered for each workspace's transparency log (docs/ledger.md): their
 * verifier keys, whose cosignatures the log accepts (sqlite/ledger.ts, addCosignatures).
 */
import { witnessInfo, type WitnessInfo, type WitnessRow } from '../rows.js';
import type { Db } from './database.js';

export class WitnessStore {
  constructor(private readonly db: Db) {}

  #wsKey(workspaceId: string): number | undefined {
    return this.db.prepare<[string], number>('SELECT ws_key FROM workspace_keys WHERE workspace_id = ?').pluck().get(workspaceId);
  }

  #rows(where: string, ...params: unknown[]): WitnessInfo[] {
    const rows = this.db
      .prepare(
        `SELECT k.workspace_id, w.name, w.vkey, w.added_ms, w.revoked_ms FROM ledger_witnesses w JOIN workspace_keys k ON k.ws_key = w.ws_key ${where} ORDER BY k.workspace_id, w.name`,
      )
      .all(...params) as WitnessRow[];
    return rows.map(witnessInfo);
  }

  /** Registers (or replaces, un-revoking) a witness's key; null: no such workspace. */
  add(workspaceId: string, name: string, vkey: string, nowMs: number): WitnessInfo | null {
    const wsKey = this.#wsKey(workspaceId);
    if (wsKey === undefined) return null;
    this.db
      .prepare(
        `INSERT INTO ledger_witnesses (ws_key, name, vkey, added_ms, revoked_ms) VALUES (?, ?, ?, ?, NULL)
         ON CONFLICT (ws_key, name) DO UPDATE SET vkey = excluded.vkey, added_ms = excluded.added_ms, revoked_ms = NULL`,
      )
      .run(wsKey, name, vkey, nowMs);
    return this.#rows('WHERE w.ws_key = ? AND w.name = ?', wsKey, name)[0];
  }

  /** The witnesses (of one workspace, when given), revoked ones included; null: no such workspace. */
  list(workspaceId?: string): WitnessInfo[] | null {
    if (workspaceId === undefined) return this.#rows('');
    const wsKey = this.#wsKey(workspaceId);
    return wsKey === undefined ? null : this.#rows('WHERE w.ws_key = ?', wsKey);
  }

  /** Revokes a witness (the first revocation's time stays); null: no such workspace or witness. */
  revoke(workspaceId: string, name: string, nowMs: number): WitnessInfo | null {
    const wsKey = this.#wsKey(workspaceId);
    if (wsKey === undefined) return null;
    const changed = this.db
      .prepare('UPDATE ledger_witnesses SET revoked_ms = coalesce(revoked_ms, ?) WHERE ws_key = ? AND name = ?')
      .run(nowMs, wsKey, name).changes;
    return changed === 0 ? null : this.#rows('WHERE w.ws_key = ? AND w.name = ?', wsKey, name)[0];
  }
}
