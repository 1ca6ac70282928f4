/**
 * The transparency log on PostgreSQL (docs/ledger.md): one append-only RFC 9162 tree per
 * workspace, the same entries and hashes as the SQLite backend (core/ledger and the record views
 * of ../record-views.ts), shared by every replica.
 *
 * - Write path: a record's leaf index comes from its workspace's `ledger_heads` row, locked by the
 *   group commit that stores the record (writer.ts), so indexes are dense and in commit order
 *   whichever replica takes the write; the entry is stored in the same transaction.
 * - Integration: whichever replica holds the `ledger` lease (lease.ts) appends the leaves past
 *   each workspace's integrated size to the tree, stores the complete subtrees it finishes and
 *   signs a checkpoint, one transaction per workspace, fenced by the lease. Another replica takes
 *   over within {@link LEASE_MS} plus a tick when the holder dies.
 * - Reads (any replica): checkpoints, proofs and tiles from stored rows; the nodes a proof needs
 *   are found first (core's nodesRead) and read in one query.
 */
import type pg from 'pg';
import {
  CompactTree,
  consistencyProof,
  Ed25519NoteSigner,
  emptyRoot,
  inclusionProof,
  leafHash,
  ledgerEntry,
  ledgerOrigin,
  nodeKey,
  nodesRead,
  signCheckpoint,
  TILE_HEIGHT,
  TILE_WIDTH,
  type HashReader,
  type LedgerEntryKind,
  type NodeId,
  type Tile,
} from '../../../core/index.js';
import type { SigningKey } from '../../../core/signing/keys.js';
import { cosignedCheckpoint, LedgerQueryError, MAX_MERGE_DELAY_MS, signedBy, verifiedCosignatures, type LedgerOptions } from '../ledger-common.js';
import { attestationSha256, evidenceSha256 } from '../record-views.js';
import { witnessInfo, type AttestationRow, type EvidenceRow, type InclusionAnswer, type WitnessInfo, type WitnessRow } from '../rows.js';
import type { LedgerStore } from '../store.js';
import { Lease, LEASE_MS } from './lease.js';
import { LogKeyMismatchError } from '../errors.js';
import { holdsNul } from './pool.js';
import type { Group } from './writer.js';
import type { WorkspaceKeys } from './workspace-keys.js';

/**
 * How often each replica takes or renews the lease and, when it holds it, integrates: a quarter of
 * the maximum merge delay, as on SQLite.
 */
export const INTEGRATE_EVERY_MS = MAX_MERGE_DELAY_MS / 4;

/** Leaves read at a time during an integration. */
const INTEGRATE_SLICE = 4096;

const INSERT_LEAVES = `INSERT INTO ledger_leaves (ws_key, leaf_index, kind, record_id, entry)
  SELECT * FROM unnest($1::int[], $2::bigint[], $3::text[], $4::text[], $5::bytea[])`;

export interface PgLedgerOptions extends LedgerOptions {
  /** the integration lease's length (tests shorten it) */
  leaseMs?: number;
}

const NO_KEY = 'this service has no log key: checkpoints are not signed (see `govctl admin ledger-key create`)';

export class PgLedgerStore implements LedgerStore {
  readonly #prefix: string;
  readonly #key: SigningKey | null;
  readonly #nowMs: () => number;
  readonly #signers = new Map<string, Ed25519NoteSigner>();
  /** integrated trees this replica has built, by ws_key (checked against the stored size before use) */
  readonly #trees = new Map<number, CompactTree>();
  readonly lease: Lease;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<number> | null = null;
  #closed = false;
  /** this replica has integrated (or runs the timer): it integrates once more and gives the lease up on close */
  #active = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly keys: WorkspaceKeys,
    options: PgLedgerOptions = {},
  ) {
    this.#prefix = options.originPrefix ?? 'govctl.local/ledger';
    ledgerOrigin(this.#prefix, 'check'); // a bad prefix fails at start, not at the first checkpoint
    this.#key = options.key ?? null;
    this.#nowMs = options.nowMs ?? Date.now;
    // The holder names the public key it signs with, so that a replica given another key can tell (checkKey).
    this.lease = new Lease(pool, 'ledger', this.#nowMs, options.leaseMs ?? LEASE_MS, this.#key?.publicKeyHex);
  }

  /**
   * Refuses a log key other than the one the replica holding the lease signs with: replicas given
   * different key files would each sign checkpoints with their own while they held the lease, and
   * every auditor pinned to one key would see the log's checkpoints fail. With no replica holding
   * the lease (all stopped: a key rotation, docs/ledger.md) any key is taken.
   * @throws LogKeyMismatchError
   */
  async checkKey(): Promise<void> {
    if (this.#key === null) return;
    const holder = await this.lease.current();
    if (holder === null || holder === this.lease.holder) return;
    const { who, tag: theirs } = Lease.parse(holder);
    if (theirs !== undefined && theirs !== this.#key.publicKeyHex) {
      throw new LogKeyMismatchError(
        `another replica (${who}) signs this database's log with another key (public key ${theirs.slice(0, 16)}…, this one's ${this.#key.publicKeyHex.slice(0, 16)}…)`,
      );
    }
  }

  get signing(): boolean {
    return this.#key !== null;
  }

  origin(workspaceId: string): string {
    return ledgerOrigin(this.#prefix, workspaceId);
  }

  #signer(workspaceId: string): Ed25519NoteSigner | null {
    if (this.#key === null) return null;
    let signer = this.#signers.get(workspaceId);
    if (!signer) {
      signer = new Ed25519NoteSigner(this.origin(workspaceId), this.#key);
      this.#signers.set(workspaceId, signer);
    }
    return signer;
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

  // ---- integration -----------------------------------------------------------------------------

  start(every = INTEGRATE_EVERY_MS): void {
    if (this.#timer !== null || this.#closed) return;
    this.#active = true;
    this.#timer = setInterval(() => void this.#tick(), every);
    this.#timer.unref();
  }

  /** Takes or renews the lease; integrates when held. Errors wait for the next tick. */
  async #tick(): Promise<void> {
    if (this.#running !== null || this.#closed) return;
    try {
      await this.integrate();
    } catch {
      // the database is away or the lease moved: the next tick tries again, nothing is half-done
    }
  }

  /**
   * When this replica holds (or can take) the lease: integrates every workspace's pending leaves
   * and signs the new checkpoints. Resolves with the leaves integrated (0 when another replica
   * holds the lease).
   */
  integrate(): Promise<number> {
    if (this.#running !== null) return this.#running.then(() => this.integrate());
    this.#running = this.#integrateAll().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async #integrateAll(): Promise<number> {
    if (!(await this.lease.take())) return 0;
    this.#active = true;
    const { rows } = await this.pool.query<{ ws_key: number }>(
      `SELECT h.ws_key FROM ledger_heads h LEFT JOIN ledger_state s ON s.ws_key = h.ws_key
       WHERE h.next_index > coalesce(s.integrated_size, 0) ORDER BY h.ws_key`,
    );
    let count = 0;
    for (const { ws_key: wsKey } of rows) count += await this.#integrateWorkspace(wsKey);
    return count;
  }

  async #integrateWorkspace(wsKey: number): Promise<number> {
    const workspaceId = await this.keys.idOf(wsKey);
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      if (!(await this.lease.fence(client))) {
        await client.query('ROLLBACK');
        return 0;
      }
      await client.query('INSERT INTO ledger_state (ws_key, integrated_size) VALUES ($1, 0) ON CONFLICT DO NOTHING', [wsKey]);
      const state = await client.query<{ integrated_size: number }>('SELECT integrated_size FROM ledger_state WHERE ws_key = $1 FOR UPDATE', [wsKey]);
      const integrated = state.rows[0].integrated_size;
      const head = await client.query<{ next_index: number }>('SELECT next_index FROM ledger_heads WHERE ws_key = $1', [wsKey]);
      const size = head.rows[0]?.next_index ?? 0;
      if (size <= integrated) {
        await client.query('ROLLBACK');
        return 0;
      }
      let tree = this.#trees.get(wsKey);
      tree = tree !== undefined && tree.size === integrated ? tree.clone() : await this.#treeAt(client, wsKey, integrated);
      for (let from = integrated; from < size; from += INTEGRATE_SLICE) {
        const to = Math.min(size, from + INTEGRATE_SLICE);
        const leaves = await client.query<{ entry: Buffer }>(
          'SELECT entry FROM ledger_leaves WHERE ws_key = $1 AND leaf_index >= $2 AND leaf_index < $3 ORDER BY leaf_index',
          [wsKey, from, to],
        );
        if (leaves.rows.length !== to - from) throw new Error(`workspace ${wsKey}: leaves ${from}..${to} are not all stored`);
        const levels: number[] = [];
        const indexes: number[] = [];
        const hashes: Buffer[] = [];
        for (const { entry } of leaves.rows) {
          const created = tree.append(leafHash(entry));
          // created[0] is the leaf itself, whose entry is stored already
          for (let i = 1; i < created.length; i++) {
            levels.push(created[i].level);
            indexes.push(created[i].index);
            hashes.push(created[i].hash);
          }
        }
        if (levels.length > 0) {
          await client.query(
            'INSERT INTO ledger_nodes (ws_key, level, idx, hash) SELECT $1, * FROM unnest($2::int[], $3::bigint[], $4::bytea[]) ON CONFLICT DO NOTHING',
            [wsKey, levels, indexes, hashes],
          );
        }
      }
      await client.query('UPDATE ledger_state SET integrated_size = $2 WHERE ws_key = $1', [wsKey, size]);
      const signer = this.#signer(workspaceId);
      if (signer) await this.#sign(client, wsKey, signer, size, tree.root());
      await client.query('COMMIT');
      this.#trees.set(wsKey, tree);
      return size - integrated;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      broken = error as Error;
      throw error;
    } finally {
      // a connection that failed is closed, not handed out again
      client.release(broken);
    }
  }

  /** The integrated tree of `size` leaves, from its stored edge nodes. */
  async #treeAt(on: pg.ClientBase | pg.Pool, wsKey: number, size: number): Promise<CompactTree> {
    const read = await this.#prefetch(on, wsKey, CompactTree.edgeNodes(size));
    return CompactTree.fromReader(size, read);
  }

  async #sign(on: pg.ClientBase | pg.Pool, wsKey: number, signer: Ed25519NoteSigner, size: number, root: Buffer): Promise<string> {
    const note = signCheckpoint({ origin: signer.name, size, rootHash: root, extensions: [] }, [signer]);
    await on.query(
      `INSERT INTO ledger_checkpoints (ws_key, tree_size, root, note, signed_ms) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (ws_key, tree_size) DO UPDATE SET note = excluded.note, signed_ms = excluded.signed_ms`,
      [wsKey, size, root, note, this.#nowMs()],
    );
    return note;
  }

  /**
   * Stops integrating; a replica that has been integrating integrates what is pending once more and
   * gives the lease up (a store opened only for `govctl admin` touches neither).
   */
  async close(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    if (!this.#closed) {
      this.#closed = true;
      if (!this.#active) return;
      try {
        await this.integrate();
        await this.lease.release();
      } catch {
        // the database is away: the lease expires by itself
      }
    }
  }

  // ---- reads ---------------------------------------------------------------------------------

  /** A reader over the stored nodes `nodes` names, read in one query (leaves: hashed from their entries). */
  async #prefetch(on: pg.ClientBase | pg.Pool, wsKey: number, nodes: readonly NodeId[]): Promise<HashReader> {
    const found = new Map<string, Uint8Array>();
    const leaves = nodes.filter((node) => node.level === 0).map((node) => node.index);
    const inner = nodes.filter((node) => node.level > 0);
    if (leaves.length > 0) {
      const { rows } = await on.query<{ leaf_index: number; entry: Buffer }>(
        'SELECT leaf_index, entry FROM ledger_leaves WHERE ws_key = $1 AND leaf_index = ANY($2::bigint[])',
        [wsKey, leaves],
      );
      for (const row of rows) found.set(nodeKey(0, row.leaf_index), leafHash(row.entry));
    }
    if (inner.length > 0) {
      const { rows } = await on.query<{ level: number; idx: number; hash: Buffer }>(
        `SELECT n.level, n.idx, n.hash FROM unnest($2::int[], $3::bigint[]) AS w (level, idx)
           JOIN ledger_nodes n ON n.ws_key = $1 AND n.level = w.level AND n.idx = w.idx`,
        [wsKey, inner.map((node) => node.level), inner.map((node) => node.index)],
      );
      for (const row of rows) found.set(nodeKey(row.level, row.idx), row.hash);
    }
    return (level, index) => {
      const hash = found.get(nodeKey(level, index));
      if (hash === undefined) throw new LedgerQueryError('not_found', level === 0 ? `leaf ${index} is not stored` : `node ${level}/${index} is not stored`);
      return hash;
    };
  }

  /** Runs a synchronous proof computation over prefetched nodes. */
  async #compute<T>(wsKey: number, compute: (read: HashReader) => T): Promise<T> {
    return compute(await this.#prefetch(this.pool, wsKey, nodesRead(compute)));
  }

  async #requireKey(workspaceId: string): Promise<number> {
    const wsKey = await this.keys.get(workspaceId);
    if (wsKey === undefined) throw new LedgerQueryError('not_found', `no workspace ${workspaceId}`);
    return wsKey;
  }

  async #integrated(wsKey: number): Promise<number> {
    const { rows } = await this.pool.query<{ integrated_size: number }>('SELECT integrated_size FROM ledger_state WHERE ws_key = $1', [wsKey]);
    return rows[0]?.integrated_size ?? 0;
  }

  async size(workspaceId: string): Promise<number> {
    return this.#integrated(await this.#requireKey(workspaceId));
  }

  async verifierKey(workspaceId: string): Promise<string> {
    await this.#requireKey(workspaceId);
    const signer = this.#signer(workspaceId);
    if (!signer) throw new LedgerQueryError('no_key', NO_KEY);
    return signer.verifierKey;
  }

  /**
   * The latest checkpoint with every cosignature held for it. Any replica answers from the stored
   * rows; when none is stored for the integrated size yet (or it was signed by a previous log key),
   * this replica signs it (the same bytes any replica would sign: deterministic Ed25519).
   */
  async checkpoint(workspaceId: string): Promise<string> {
    const wsKey = await this.#requireKey(workspaceId);
    const signer = this.#signer(workspaceId);
    if (!signer) throw new LedgerQueryError('no_key', NO_KEY);
    const { rows } = await this.pool.query<{ tree_size: number; note: string }>(
      'SELECT tree_size, note FROM ledger_checkpoints WHERE ws_key = $1 ORDER BY tree_size DESC LIMIT 1',
      [wsKey],
    );
    let latest = rows[0];
    const size = await this.#integrated(wsKey);
    if (latest === undefined || latest.tree_size < size || !signedBy(latest.note, signer)) {
      const root = size === 0 ? emptyRoot() : await this.#rootAt(wsKey, size);
      latest = { tree_size: size, note: await this.#sign(this.pool, wsKey, signer, size, root) };
    }
    const cosignatures = await this.pool.query<{ line: string }>(
      'SELECT line FROM ledger_cosignatures WHERE ws_key = $1 AND tree_size = $2 ORDER BY name COLLATE "C"',
      [wsKey, latest.tree_size],
    );
    return cosignatures.rows.length === 0 ? latest.note : latest.note + cosignatures.rows.map((row) => row.line).join('');
  }

  async #rootAt(wsKey: number, size: number): Promise<Buffer> {
    const tree = this.#trees.get(wsKey);
    if (tree && tree.size === size) return tree.root();
    return (await this.#treeAt(this.pool, wsKey, size)).root();
  }

  async #checkSize(wsKey: number, value: number | undefined, field: string, atLeast: number): Promise<number> {
    const integrated = await this.#integrated(wsKey);
    if (value === undefined) return integrated;
    if (!Number.isSafeInteger(value) || value < atLeast) throw new LedgerQueryError('invalid', `${field} must be an integer of at least ${atLeast}`, field);
    if (value > integrated) throw new LedgerQueryError('not_found', `${field} ${value} is beyond the log's size ${integrated}`, field);
    return value;
  }

  async inclusion(workspaceId: string, id: string, treeSize?: number): Promise<InclusionAnswer | { pending: { id: string; leaf_index: number } }> {
    const wsKey = await this.#requireKey(workspaceId);
    if (holdsNul(id)) throw new LedgerQueryError('not_found', 'no record with this id in the workspace log', 'id');
    const { rows } = await this.pool.query<{ leaf_index: number; entry: Buffer }>(
      'SELECT leaf_index, entry FROM ledger_leaves WHERE ws_key = $1 AND record_id = $2',
      [wsKey, id],
    );
    const leaf = rows[0];
    if (!leaf) throw new LedgerQueryError('not_found', 'no record with this id in the workspace log', 'id');
    const integrated = await this.#integrated(wsKey);
    if (leaf.leaf_index >= integrated) return { pending: { id, leaf_index: leaf.leaf_index } };
    const size = await this.#checkSize(wsKey, treeSize, 'tree_size', 1);
    if (leaf.leaf_index >= size) throw new LedgerQueryError('invalid', `the record's leaf ${leaf.leaf_index} is not in a tree of size ${size}`, 'tree_size');
    const proof = await this.#compute(wsKey, (read) => inclusionProof(leaf.leaf_index, size, read));
    return { id, leaf_index: leaf.leaf_index, tree_size: size, entry: leaf.entry.toString('utf8'), hashes: proof.map((hash) => hash.toString('base64')) };
  }

  async consistency(workspaceId: string, from: number, to: number): Promise<{ from: number; to: number; hashes: string[] }> {
    const wsKey = await this.#requireKey(workspaceId);
    const toSize = await this.#checkSize(wsKey, to, 'to', 0);
    const fromSize = await this.#checkSize(wsKey, from, 'from', 0);
    if (fromSize > toSize) throw new LedgerQueryError('invalid', 'from must not be larger than to', 'from');
    const proof = await this.#compute(wsKey, (read) => consistencyProof(fromSize, toSize, read));
    return { from: fromSize, to: toSize, hashes: proof.map((hash) => hash.toString('base64')) };
  }

  async tile(workspaceId: string, tile: Tile): Promise<Buffer | null> {
    const wsKey = await this.#requireKey(workspaceId);
    const integrated = await this.#integrated(wsKey);
    const leavesFrom = async (from: number, to: number): Promise<Buffer[]> =>
      (
        await this.pool.query<{ entry: Buffer }>(
          'SELECT entry FROM ledger_leaves WHERE ws_key = $1 AND leaf_index >= $2 AND leaf_index < $3 ORDER BY leaf_index',
          [wsKey, from, to],
        )
      ).rows.map((row) => row.entry);
    if (tile.level === 'entries') {
      const start = tile.index * TILE_WIDTH;
      if (start + tile.width > integrated) return null;
      const parts: Buffer[] = [];
      for (const entry of await leavesFrom(start, start + tile.width)) {
        const length = Buffer.alloc(2);
        length.writeUInt16BE(entry.length);
        parts.push(length, entry);
      }
      return Buffer.concat(parts);
    }
    const span = TILE_WIDTH ** tile.level;
    const first = tile.index * TILE_WIDTH;
    if ((first + tile.width) * span > integrated) return null;
    const hashes =
      tile.level === 0
        ? (await leavesFrom(first, first + tile.width)).map((entry) => leafHash(entry))
        : (
            await this.pool.query<{ hash: Buffer }>('SELECT hash FROM ledger_nodes WHERE ws_key = $1 AND level = $2 AND idx >= $3 AND idx < $4 ORDER BY idx', [
              wsKey,
              tile.level * TILE_HEIGHT,
              first,
              first + tile.width,
            ])
          ).rows.map((row) => row.hash);
    if (hashes.length !== tile.width) return null;
    return Buffer.concat(hashes);
  }

  async addCosignatures(workspaceId: string, note: string): Promise<string[]> {
    const wsKey = await this.#requireKey(workspaceId);
    const { text, size } = cosignedCheckpoint(note);
    const stored = await this.pool.query<{ note: string }>('SELECT note FROM ledger_checkpoints WHERE ws_key = $1 AND tree_size = $2', [wsKey, size]);
    const witnesses = await this.pool.query<{ vkey: string }>(
      'SELECT vkey FROM ledger_witnesses WHERE ws_key = $1 AND revoked_ms IS NULL ORDER BY name COLLATE "C"',
      [wsKey],
    );
    const cosignatures = verifiedCosignatures(
      note,
      text,
      stored.rows[0]?.note,
      witnesses.rows.map(({ vkey }) => vkey),
    );
    const now = this.#nowMs();
    const names = cosignatures.map(({ name }) => name);
    if (names.length > 0) {
      await this.pool.query(
        `INSERT INTO ledger_cosignatures (ws_key, tree_size, name, line, added_ms) SELECT $1, $2, * FROM unnest($3::text[], $4::text[], $5::bigint[])
         ON CONFLICT (ws_key, tree_size, name) DO UPDATE SET line = excluded.line, added_ms = excluded.added_ms`,
        [wsKey, size, names, cosignatures.map(({ line }) => line), names.map(() => now)],
      );
    }
    return names;
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
