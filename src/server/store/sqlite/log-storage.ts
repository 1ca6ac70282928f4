/**
 * The transparency log's storage on SQLite (../../ledger/storage.ts): leaves appended in the
 * transaction of the record they commit to, the complete subtrees and checkpoints integration
 * writes, cosignatures and the witnesses registered. The log itself is ../../ledger/log.ts.
 *
 * A leaf's rowid is (ws_key << 40) + leaf_index, so reads by index are rowid reads.
 */
import type Database from 'better-sqlite3';
import { ledgerEntry, nodeKey, type LedgerEntryKind, type NodeId } from '../../../core/index.js';
import type { IntegrationStep, LogStorage } from '../../ledger/storage.js';
import { attestationSha256, evidenceSha256 } from '../record-views.js';
import { witnessInfo, type AttestationRow, type EvidenceRow, type WitnessInfo, type WitnessRow } from '../rows.js';
import type { Db } from './database.js';

export class SqliteLogStorage implements LogStorage {
  readonly #db: Db;
  /** workspace id → key, remembered once read: keys are never changed or deleted, and every write appends a leaf */
  readonly #keys = new Map<string, number>();
  readonly #ids = new Map<number, string>();
  /** next leaf index per workspace within the current write attempt (cleared at each group's begin) */
  #next = new Map<number, number>();

  readonly #keyOf: Database.Statement<[string], number>;
  readonly #idOf: Database.Statement<[number], string>;
  readonly #maxLeaf: Database.Statement<[number, number], number | null>;
  readonly #insertLeaf: Database.Statement<[number, number, number, number, string, string, Buffer]>;
  readonly #leafOf: Database.Statement<[number, string], { leaf_index: number; entry: Buffer }>;
  readonly #leafAt: Database.Statement<[number, number], Buffer>;
  readonly #leavesFrom: Database.Statement<[number, number, number, number], Buffer>;
  readonly #integrated: Database.Statement<[number], number>;
  readonly #setIntegrated: Database.Statement<[number, number]>;
  readonly #insertNode: Database.Statement<[number, number, number, Buffer]>;
  readonly #node: Database.Statement<[number, number, number], Buffer>;
  readonly #nodeRange: Database.Statement<[number, number, number, number], Buffer>;
  readonly #latest: Database.Statement<[number], { tree_size: number; note: string }>;
  readonly #checkpointAt: Database.Statement<[number, number], string>;
  readonly #putCheckpoint: Database.Statement<[number, number, Buffer, string, number]>;
  readonly #cosignatures: Database.Statement<[number, number], string>;
  readonly #putCosignature: Database.Statement<[number, number, string, string, number]>;
  readonly #witnessKeys: Database.Statement<[number], string>;

  constructor(db: Db) {
    this.#db = db;
    this.#keyOf = db.prepare<[string], number>('SELECT ws_key FROM workspace_keys WHERE workspace_id = ?').pluck();
    this.#idOf = db.prepare<[number], string>('SELECT workspace_id FROM workspace_keys WHERE ws_key = ?').pluck();
    this.#maxLeaf = db
      .prepare<[number, number], number | null>(
        'SELECT leaf_index FROM ledger_leaves WHERE leaf_key >= (? << 40) AND leaf_key < ((? + 1) << 40) ORDER BY leaf_key DESC LIMIT 1',
      )
      .pluck();
    this.#insertLeaf = db.prepare('INSERT INTO ledger_leaves (leaf_key, ws_key, leaf_index, kind, record_id, entry) VALUES ((? << 40) + ?, ?, ?, ?, ?, ?)');
    this.#leafOf = db.prepare('SELECT leaf_index, entry FROM ledger_leaves WHERE ws_key = ? AND record_id = ?');
    this.#leafAt = db.prepare<[number, number], Buffer>('SELECT entry FROM ledger_leaves WHERE leaf_key = (? << 40) + ?').pluck();
    this.#leavesFrom = db
      .prepare<[number, number, number, number], Buffer>(
        'SELECT entry FROM ledger_leaves WHERE leaf_key >= (? << 40) + ? AND leaf_key < (? << 40) + ? ORDER BY leaf_key',
      )
      .pluck();
    this.#integrated = db.prepare<[number], number>('SELECT integrated_size FROM ledger_state WHERE ws_key = ?').pluck();
    this.#setIntegrated = db.prepare(
      'INSERT INTO ledger_state (ws_key, integrated_size) VALUES (?, ?) ON CONFLICT (ws_key) DO UPDATE SET integrated_size = excluded.integrated_size',
    );
    this.#insertNode = db.prepare('INSERT OR IGNORE INTO ledger_nodes (ws_key, level, idx, hash) VALUES (?, ?, ?, ?)');
    this.#node = db.prepare<[number, number, number], Buffer>('SELECT hash FROM ledger_nodes WHERE ws_key = ? AND level = ? AND idx = ?').pluck();
    this.#nodeRange = db
      .prepare<[number, number, number, number], Buffer>('SELECT hash FROM ledger_nodes WHERE ws_key = ? AND level = ? AND idx >= ? AND idx < ? ORDER BY idx')
      .pluck();
    this.#latest = db.prepare('SELECT tree_size, note FROM ledger_checkpoints WHERE ws_key = ? ORDER BY tree_size DESC LIMIT 1');
    this.#checkpointAt = db.prepare<[number, number], string>('SELECT note FROM ledger_checkpoints WHERE ws_key = ? AND tree_size = ?').pluck();
    this.#putCheckpoint = db.prepare(
      'INSERT INTO ledger_checkpoints (ws_key, tree_size, root, note, signed_ms) VALUES (?, ?, ?, ?, ?) ' +
        'ON CONFLICT (ws_key, tree_size) DO UPDATE SET note = excluded.note, signed_ms = excluded.signed_ms',
    );
    this.#cosignatures = db.prepare<[number, number], string>('SELECT line FROM ledger_cosignatures WHERE ws_key = ? AND tree_size = ? ORDER BY name').pluck();
    this.#putCosignature = db.prepare(
      'INSERT INTO ledger_cosignatures (ws_key, tree_size, name, line, added_ms) VALUES (?, ?, ?, ?, ?) ' +
        'ON CONFLICT (ws_key, tree_size, name) DO UPDATE SET line = excluded.line, added_ms = excluded.added_ms',
    );
    this.#witnessKeys = db.prepare<[number], string>('SELECT vkey FROM ledger_witnesses WHERE ws_key = ? AND revoked_ms IS NULL ORDER BY name').pluck();
  }

  #key(workspaceId: string): number | undefined {
    let key = this.#keys.get(workspaceId);
    if (key === undefined) {
      key = this.#keyOf.get(workspaceId);
      if (key !== undefined) this.#keys.set(workspaceId, key);
    }
    return key;
  }

  #stored(wsKey: number): number {
    return (this.#maxLeaf.get(wsKey, wsKey) ?? -1) + 1;
  }

  // ---- write path (inside a group's transaction) -----------------------------------------------

  /** Forgets the indexes handed out by a rolled-back attempt; the writer's `begin` hook. */
  beginGroup(): void {
    if (this.#next.size > 0) this.#next = new Map();
  }

  /**
   * Assigns the next leaf index of the record's workspace and stores its entry, in the caller's
   * transaction. Call it as a write's last statement (a write that throws before it takes no index).
   * @returns the leaf index
   */
  append(kind: LedgerEntryKind, id: string, workspaceId: string, receivedAt: string, sha256: string): number {
    const wsKey = this.#key(workspaceId);
    if (wsKey === undefined) throw new Error(`workspace ${workspaceId} has no key: it was not provisioned`);
    const index = this.#next.get(wsKey) ?? this.#stored(wsKey);
    const entry = ledgerEntry({ kind, id, workspace_id: workspaceId, received_at: receivedAt, sha256 });
    this.#insertLeaf.run(wsKey, index, wsKey, index, kind, id, Buffer.from(entry, 'utf8'));
    this.#next.set(wsKey, index + 1);
    return index;
  }

  appendEvidence(row: EvidenceRow): number {
    return this.append('evidence', row.record_id, row.workspace_id, row.received_at, evidenceSha256(row));
  }

  appendAttestation(row: AttestationRow): number {
    return this.append('attestation', row.attestation_id, row.workspace_id, row.received_at, attestationSha256(row));
  }

  // ---- the port ----------------------------------------------------------------------------------

  async workspaceKey(workspaceId: string): Promise<number | undefined> {
    return this.#key(workspaceId);
  }

  async workspaceId(wsKey: number): Promise<string> {
    let id = this.#ids.get(wsKey);
    if (id === undefined) {
      id = this.#idOf.get(wsKey)!;
      this.#ids.set(wsKey, id);
    }
    return id;
  }

  /** One process writes a SQLite database at a time; another integrating is caught by writeIntegration. */
  async claimIntegration(): Promise<boolean> {
    return this.#db.open;
  }

  async releaseIntegration(): Promise<void> {}

  async pendingWorkspaces(): Promise<number[]> {
    const keys = this.#db.prepare<[], number>('SELECT ws_key FROM workspace_keys ORDER BY ws_key').pluck().all();
    return keys.filter((wsKey) => this.#stored(wsKey) > (this.#integrated.get(wsKey) ?? 0));
  }

  async sizes(wsKey: number): Promise<{ integrated: number; stored: number }> {
    return { integrated: this.#integrated.get(wsKey) ?? 0, stored: this.#stored(wsKey) };
  }

  async writeIntegration(wsKey: number, step: IntegrationStep, nowMs: number): Promise<boolean> {
    // Without its own fsync: everything an integration writes is recomputed from the leaves, which
    // their writes committed durably; the next write's commit (synchronous=FULL) syncs these WAL
    // frames too. A checkpoint lost to a power cut is signed again identically (same size, same
    // root, deterministic Ed25519), so nothing served can disagree with what follows.
    this.#db.pragma('synchronous = NORMAL');
    try {
      return this.#db.transaction(() => {
        if ((this.#integrated.get(wsKey) ?? 0) !== step.from) return false;
        for (const node of step.nodes) this.#insertNode.run(wsKey, node.level, node.index, node.hash);
        this.#setIntegrated.run(wsKey, step.to);
        if (step.checkpoint) this.#putCheckpoint.run(wsKey, step.to, step.checkpoint.root, step.checkpoint.note, nowMs);
        return true;
      })();
    } finally {
      this.#db.pragma('synchronous = FULL');
    }
  }

  async leafOf(wsKey: number, id: string): Promise<{ leafIndex: number; entry: Buffer } | undefined> {
    const leaf = this.#leafOf.get(wsKey, id);
    return leaf && { leafIndex: leaf.leaf_index, entry: leaf.entry };
  }

  async entries(wsKey: number, from: number, to: number): Promise<Buffer[]> {
    return this.#leavesFrom.all(wsKey, from, wsKey, to);
  }

  async entriesAt(wsKey: number, indexes: readonly number[]): Promise<Map<number, Buffer>> {
    const found = new Map<number, Buffer>();
    for (const index of indexes) {
      const entry = this.#leafAt.get(wsKey, index);
      if (entry !== undefined) found.set(index, entry);
    }
    return found;
  }

  async hashes(wsKey: number, nodes: readonly NodeId[]): Promise<Map<string, Buffer>> {
    const found = new Map<string, Buffer>();
    for (const { level, index } of nodes) {
      const hash = this.#node.get(wsKey, level, index);
      if (hash !== undefined) found.set(nodeKey(level, index), hash);
    }
    return found;
  }

  async hashRange(wsKey: number, level: number, from: number, to: number): Promise<Buffer[]> {
    return this.#nodeRange.all(wsKey, level, from, to);
  }

  async latestCheckpoint(wsKey: number): Promise<{ size: number; note: string } | undefined> {
    const row = this.#latest.get(wsKey);
    return row && { size: row.tree_size, note: row.note };
  }

  async checkpointAt(wsKey: number, size: number): Promise<string | undefined> {
    return this.#checkpointAt.get(wsKey, size);
  }

  async putCheckpoint(wsKey: number, size: number, root: Buffer, note: string, nowMs: number): Promise<void> {
    this.#putCheckpoint.run(wsKey, size, root, note, nowMs);
  }

  async cosignatures(wsKey: number, size: number): Promise<string[]> {
    return this.#cosignatures.all(wsKey, size);
  }

  async putCosignatures(wsKey: number, size: number, lines: readonly { name: string; line: string }[], nowMs: number): Promise<void> {
    this.#db.transaction(() => {
      for (const { name, line } of lines) this.#putCosignature.run(wsKey, size, name, line, nowMs);
    })();
  }

  // ---- witnesses ---------------------------------------------------------------------------------

  async witnessKeys(wsKey: number): Promise<string[]> {
    return this.#witnessKeys.all(wsKey);
  }

  #witnesses(where: string, ...params: unknown[]): WitnessInfo[] {
    const rows = this.#db
      .prepare(
        `SELECT k.workspace_id, w.name, w.vkey, w.added_ms, w.revoked_ms FROM ledger_witnesses w JOIN workspace_keys k ON k.ws_key = w.ws_key ${where} ORDER BY k.workspace_id, w.name`,
      )
      .all(...params) as WitnessRow[];
    return rows.map(witnessInfo);
  }

  async addWitness(workspaceId: string, name: string, vkey: string, nowMs: number): Promise<WitnessInfo | null> {
    const wsKey = this.#key(workspaceId);
    if (wsKey === undefined) return null;
    this.#db
      .prepare(
        `INSERT INTO ledger_witnesses (ws_key, name, vkey, added_ms, revoked_ms) VALUES (?, ?, ?, ?, NULL)
         ON CONFLICT (ws_key, name) DO UPDATE SET vkey = excluded.vkey, added_ms = excluded.added_ms, revoked_ms = NULL`,
      )
      .run(wsKey, name, vkey, nowMs);
    return this.#witnesses('WHERE w.ws_key = ? AND w.name = ?', wsKey, name)[0];
  }

  async listWitnesses(workspaceId?: string): Promise<WitnessInfo[] | null> {
    if (workspaceId === undefined) return this.#witnesses('');
    const wsKey = this.#key(workspaceId);
    return wsKey === undefined ? null : this.#witnesses('WHERE w.ws_key = ?', wsKey);
  }

  async revokeWitness(workspaceId: string, name: string, nowMs: number): Promise<WitnessInfo | null> {
    const wsKey = this.#key(workspaceId);
    if (wsKey === undefined) return null;
    const changed = this.#db
      .prepare('UPDATE ledger_witnesses SET revoked_ms = coalesce(revoked_ms, ?) WHERE ws_key = ? AND name = ?')
      .run(nowMs, wsKey, name).changes;
    return changed === 0 ? null : this.#witnesses('WHERE w.ws_key = ? AND w.name = ?', wsKey, name)[0];
  }
}
