/**
 * The transparency log's storage on PostgreSQL (../../ledger/storage.ts), shared by every replica.
 *
 * - Write path: a record's leaf index comes from its workspace's `ledger_heads` row, locked by the
 *   group commit that stores the record (writer.ts), so indexes are dense and in commit order
 *   whichever replica takes the write; the entry is stored in the same transaction.
 * - Integration: whichever replica holds the `ledger` lease (lease.ts) integrates; each step is
 *   written in a transaction fenced by the lease. Another replica takes over within
 *   {@link LEASE_MS} plus a tick when the holder dies.
 */
import type pg from 'pg';
import { ledgerEntry, nodeKey, type LedgerEntryKind, type NodeId } from '../../../core/index.js';
import type { LedgerOptions } from '../../ledger/notes.js';
import type { IntegrationStep, LogStorage } from '../../ledger/storage.js';
import { LogKeyMismatchError } from '../errors.js';
import { attestationSha256, evidenceSha256 } from '../record-views.js';
import { witnessInfo, type AttestationRow, type EvidenceRow, type WitnessInfo, type WitnessRow } from '../rows.js';
import { Lease, LEASE_MS } from './lease.js';
import { holdsNul } from './pool.js';
import type { WorkspaceKeys } from './workspace-keys.js';
import type { Group } from './writer.js';

const INSERT_LEAVES = `INSERT INTO ledger_leaves (ws_key, leaf_index, kind, record_id, entry)
  SELECT * FROM unnest($1::int[], $2::bigint[], $3::text[], $4::text[], $5::bytea[])`;

export interface PgLedgerOptions extends LedgerOptions {
  /** the integration lease's length (tests shorten it) */
  leaseMs?: number;
}

export class PgLogStorage implements LogStorage {
  readonly lease: Lease;
  readonly #publicKey: string | undefined;
  /** this replica has integrated: it gives the lease up on close */
  #claimed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly keys: WorkspaceKeys,
    options: PgLedgerOptions = {},
  ) {
    this.#publicKey = options.key?.publicKeyHex;
    // The holder names the public key it signs with, so that a replica given another key can tell (checkKey).
    this.lease = new Lease(pool, 'ledger', options.nowMs ?? Date.now, options.leaseMs ?? LEASE_MS, this.#publicKey);
  }

  /**
   * Refuses a log key other than the one the replica holding the lease signs with: replicas given
   * different key files would each sign checkpoints with their own while they held the lease, and
   * every auditor pinned to one key would see the log's checkpoints fail. With no replica holding
   * the lease (all stopped: a key rotation, docs/ledger.md) any key is taken.
   * @throws LogKeyMismatchError
   */
  async checkKey(): Promise<void> {
    if (this.#publicKey === undefined) return;
    const holder = await this.lease.current();
    if (holder === null || holder === this.lease.holder) return;
    const { who, tag: theirs } = Lease.parse(holder);
    if (theirs !== undefined && theirs !== this.#publicKey) {
      throw new LogKeyMismatchError(
        `another replica (${who}) signs this database's log with another key (public key ${theirs.slice(0, 16)}…, this one's ${this.#publicKey.slice(0, 16)}…)`,
      );
    }
  }

  // ---- write path (inside a group, writer.ts) ------------------------------------------------

  /** Takes the record's leaf index from the group's head of its workspace and adds its entry. */
  append(group: Group, wsKey: number, kind: LedgerEntryKind, id: string, workspaceId: string, receivedAt: string, sha256: string): number {
    const index = group.takeIndex(wsKey);
    const entry = ledgerEntry({ kind, id, workspace_id: workspaceId, received_at: receivedAt, sha256 });
    group.add('ledger_leaves', INSERT_LEAVES, [wsKey, index, kind, id, Buffer.from(entry, 'utf8')]);
    return index;
  }

  appendEvidence(group: Group, wsKey: number, row: EvidenceRow): number {
    return this.append(group, wsKey, 'evidence', row.record_id, row.workspace_id, row.received_at, evidenceSha256(row));
  }

  appendAttestation(group: Group, wsKey: number, row: AttestationRow): number {
    return this.append(group, wsKey, 'attestation', row.attestation_id, row.workspace_id, row.received_at, attestationSha256(row));
  }

  /** The group's end: the heads it advanced, written with its rows. */
  advanceHeads(group: Group): void {
    if (group.heads.size === 0) return;
    group.addStatement(
      'UPDATE ledger_heads h SET next_index = v.n FROM unnest($1::int[], $2::bigint[]) AS v (k, n) WHERE h.ws_key = v.k AND h.next_index <> v.n',
      [[...group.heads.keys()], [...group.heads.values()]],
    );
  }

  // ---- the port ----------------------------------------------------------------------------------

  async workspaceKey(workspaceId: string): Promise<number | undefined> {
    return this.keys.get(workspaceId);
  }

  async workspaceId(wsKey: number): Promise<string> {
    return this.keys.idOf(wsKey);
  }

  async claimIntegration(): Promise<boolean> {
    const held = await this.lease.take();
    if (held) this.#claimed = true;
    return held;
  }

  /** Gives the lease up, when this replica has held it (a store opened for `govctl admin` touches nothing). */
  async releaseIntegration(): Promise<void> {
    if (this.#claimed) await this.lease.release();
  }

  async pendingWorkspaces(): Promise<number[]> {
    const { rows } = await this.pool.query<{ ws_key: number }>(
      `SELECT h.ws_key FROM ledger_heads h LEFT JOIN ledger_state s ON s.ws_key = h.ws_key
       WHERE h.next_index > coalesce(s.integrated_size, 0) ORDER BY h.ws_key`,
    );
    return rows.map((row) => row.ws_key);
  }

  async sizes(wsKey: number): Promise<{ integrated: number; stored: number }> {
    const { rows } = await this.pool.query<{ integrated: number; stored: number }>(
      `SELECT coalesce((SELECT integrated_size FROM ledger_state WHERE ws_key = $1), 0) AS integrated,
              coalesce((SELECT next_index FROM ledger_heads WHERE ws_key = $1), 0) AS stored`,
      [wsKey],
    );
    return rows[0];
  }

  async writeIntegration(wsKey: number, step: IntegrationStep, nowMs: number): Promise<boolean> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      if (!(await this.lease.fence(client))) {
        await client.query('ROLLBACK');
        return false;
      }
      await client.query('INSERT INTO ledger_state (ws_key, integrated_size) VALUES ($1, 0) ON CONFLICT DO NOTHING', [wsKey]);
      const state = await client.query<{ integrated_size: number }>('SELECT integrated_size FROM ledger_state WHERE ws_key = $1 FOR UPDATE', [wsKey]);
      if (state.rows[0].integrated_size !== step.from) {
        await client.query('ROLLBACK');
        return false;
      }
      if (step.nodes.length > 0) {
        await client.query(
          'INSERT INTO ledger_nodes (ws_key, level, idx, hash) SELECT $1, * FROM unnest($2::int[], $3::bigint[], $4::bytea[]) ON CONFLICT DO NOTHING',
          [wsKey, step.nodes.map((node) => node.level), step.nodes.map((node) => node.index), step.nodes.map((node) => node.hash)],
        );
      }
      await client.query('UPDATE ledger_state SET integrated_size = $2 WHERE ws_key = $1', [wsKey, step.to]);
      if (step.checkpoint) await this.#putCheckpoint(client, wsKey, step.to, step.checkpoint.root, step.checkpoint.note, nowMs);
      await client.query('COMMIT');
      return true;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      broken = error as Error;
      throw error;
    } finally {
      // a connection that failed is closed, not handed out again
      client.release(broken);
    }
  }

  async leafOf(wsKey: number, id: string): Promise<{ leafIndex: number; entry: Buffer } | undefined> {
    if (holdsNul(id)) return undefined;
    const { rows } = await this.pool.query<{ leaf_index: number; entry: Buffer }>(
      'SELECT leaf_index, entry FROM ledger_leaves WHERE ws_key = $1 AND record_id = $2',
      [wsKey, id],
    );
    return rows[0] && { leafIndex: rows[0].leaf_index, entry: rows[0].entry };
  }

  async entries(wsKey: number, from: number, to: number): Promise<Buffer[]> {
    const { rows } = await this.pool.query<{ entry: Buffer }>(
      'SELECT entry FROM ledger_leaves WHERE ws_key = $1 AND leaf_index >= $2 AND leaf_index < $3 ORDER BY leaf_index',
      [wsKey, from, to],
    );
    return rows.map((row) => row.entry);
  }

  async entriesAt(wsKey: number, indexes: readonly number[]): Promise<Map<number, Buffer>> {
    const { rows } = await this.pool.query<{ leaf_index: number; entry: Buffer }>(
      'SELECT leaf_index, entry FROM ledger_leaves WHERE ws_key = $1 AND leaf_index = ANY($2::bigint[])',
      [wsKey, indexes],
    );
    return new Map(rows.map((row) => [row.leaf_index, row.entry]));
  }

  async hashes(wsKey: number, nodes: readonly NodeId[]): Promise<Map<string, Buffer>> {
    const { rows } = await this.pool.query<{ level: number; idx: number; hash: Buffer }>(
      `SELECT n.level, n.idx, n.hash FROM unnest($2::int[], $3::bigint[]) AS w (level, idx)
         JOIN ledger_nodes n ON n.ws_key = $1 AND n.level = w.level AND n.idx = w.idx`,
      [wsKey, nodes.map((node) => node.level), nodes.map((node) => node.index)],
    );
    return new Map(rows.map((row) => [nodeKey(row.level, row.idx), row.hash]));
  }

  async hashRange(wsKey: number, level: number, from: number, to: number): Promise<Buffer[]> {
    const { rows } = await this.pool.query<{ hash: Buffer }>(
      'SELECT hash FROM ledger_nodes WHERE ws_key = $1 AND level = $2 AND idx >= $3 AND idx < $4 ORDER BY idx',
      [wsKey, level, from, to],
    );
    return rows.map((row) => row.hash);
  }

  async latestCheckpoint(wsKey: number): Promise<{ size: number; note: string } | undefined> {
    const { rows } = await this.pool.query<{ tree_size: number; note: string }>(
      'SELECT tree_size, note FROM ledger_checkpoints WHERE ws_key = $1 ORDER BY tree_size DESC LIMIT 1',
      [wsKey],
    );
    return rows[0] && { size: rows[0].tree_size, note: rows[0].note };
  }

  async checkpointAt(wsKey: number, size: number): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ note: string }>('SELECT note FROM ledger_checkpoints WHERE ws_key = $1 AND tree_size = $2', [wsKey, size]);
    return rows[0]?.note;
  }

  putCheckpoint(wsKey: number, size: number, root: Buffer, note: string, nowMs: number): Promise<void> {
    return this.#putCheckpoint(this.pool, wsKey, size, root, note, nowMs);
  }

  async #putCheckpoint(on: pg.ClientBase | pg.Pool, wsKey: number, size: number, root: Buffer, note: string, nowMs: number): Promise<void> {
    await on.query(
      `INSERT INTO ledger_checkpoints (ws_key, tree_size, root, note, signed_ms) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (ws_key, tree_size) DO UPDATE SET note = excluded.note, signed_ms = excluded.signed_ms`,
      [wsKey, size, root, note, nowMs],
    );
  }

  async cosignatures(wsKey: number, size: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ line: string }>(
      'SELECT line FROM ledger_cosignatures WHERE ws_key = $1 AND tree_size = $2 ORDER BY name COLLATE "C"',
      [wsKey, size],
    );
    return rows.map((row) => row.line);
  }

  async putCosignatures(wsKey: number, size: number, lines: readonly { name: string; line: string }[], nowMs: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO ledger_cosignatures (ws_key, tree_size, name, line, added_ms) SELECT $1, $2, * FROM unnest($3::text[], $4::text[], $5::bigint[])
       ON CONFLICT (ws_key, tree_size, name) DO UPDATE SET line = excluded.line, added_ms = excluded.added_ms`,
      [wsKey, size, lines.map(({ name }) => name), lines.map(({ line }) => line), lines.map(() => nowMs)],
    );
  }

  // ---- witnesses ---------------------------------------------------------------------------------

  async witnessKeys(wsKey: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ vkey: string }>(
      'SELECT vkey FROM ledger_witnesses WHERE ws_key = $1 AND revoked_ms IS NULL ORDER BY name COLLATE "C"',
      [wsKey],
    );
    return rows.map((row) => row.vkey);
  }

  async addWitness(workspaceId: string, name: string, vkey: string, nowMs: number): Promise<WitnessInfo | null> {
    const wsKey = await this.keys.get(workspaceId);
    if (wsKey === undefined) return null;
    await this.pool.query(
      `INSERT INTO ledger_witnesses (ws_key, name, vkey, added_ms, revoked_ms) VALUES ($1, $2, $3, $4, NULL)
       ON CONFLICT (ws_key, name) DO UPDATE SET vkey = excluded.vkey, added_ms = excluded.added_ms, revoked_ms = NULL`,
      [wsKey, name, vkey, nowMs],
    );
    return (await this.#witnesses('WHERE w.ws_key = $1 AND w.name = $2', [wsKey, name]))[0];
  }

  async listWitnesses(workspaceId?: string): Promise<WitnessInfo[] | null> {
    if (workspaceId === undefined) return this.#witnesses('', []);
    const wsKey = await this.keys.get(workspaceId);
    return wsKey === undefined ? null : this.#witnesses('WHERE w.ws_key = $1', [wsKey]);
  }

  async revokeWitness(workspaceId: string, name: string, nowMs: number): Promise<WitnessInfo | null> {
    const wsKey = await this.keys.get(workspaceId);
    if (wsKey === undefined) return null;
    const { rowCount } = await this.pool.query('UPDATE ledger_witnesses SET revoked_ms = coalesce(revoked_ms, $1) WHERE ws_key = $2 AND name = $3', [
      nowMs,
      wsKey,
      name,
    ]);
    if (rowCount === 0) return null;
    return (await this.#witnesses('WHERE w.ws_key = $1 AND w.name = $2', [wsKey, name]))[0];
  }

  async #witnesses(where: string, values: unknown[]): Promise<WitnessInfo[]> {
    const { rows } = await this.pool.query<WitnessRow>(
      `SELECT k.workspace_id, w.name, w.vkey, w.added_ms, w.revoked_ms FROM ledger_witnesses w JOIN workspace_keys k ON k.ws_key = w.ws_key ${where}
       ORDER BY k.workspace_id COLLATE "C", w.name COLLATE "C"`,
      values,
    );
    return rows.map(witnessInfo);
  }
}
