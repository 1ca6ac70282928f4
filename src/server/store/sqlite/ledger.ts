/**
 * The transparency log in the store (issue 12, docs/ledger.md): one append-only RFC 9162 Merkle
 * tree per workspace.
 *
 * - Write path: a record's leaf index is assigned, and its entry stored, in the transaction that
 *   stores the record (Store.recordEvidence / recordAttestations), so an acknowledged write has
 *   its index. Nothing else happens there: no hashing of the tree, no signing.
 * - Integration ({@link LedgerStore.integrate}): every {@link INTEGRATE_EVERY_MS} (sooner when
 *   {@link INTEGRATE_AT_PENDING} leaves wait), per workspace the pending leaves are appended to an
 *   in-memory {@link CompactTree}, the complete subtrees they finish are stored, and a checkpoint is
 *   signed — one transaction. The maximum merge delay is {@link MAX_MERGE_DELAY_MS}.
 * - Reads: checkpoints (with the witness cosignatures held), proofs and tiles are computed from
 *   stored complete subtrees, O(log n) rows each.
 *
 * The log's private key never touches the database (see ledger-key.ts): with the key absent the
 * tree is still kept, but no checkpoint is signed.
 */
import type Database from 'better-sqlite3';
import {
  CompactTree,
  consistencyProof,
  emptyRoot,
  inclusionProof,
  leafHash,
  ledgerEntry,
  ledgerOrigin,
  Ed25519NoteSigner,
  signCheckpoint,
  TILE_HEIGHT,
  TILE_WIDTH,
  type HashReader,
  type LedgerEntryKind,
  type Tile,
} from '../../../core/index.js';
import type { SigningKey } from '../../../core/signing/keys.js';
import { cosignedCheckpoint, LedgerQueryError, signedBy, verifiedCosignatures, type LedgerOptions } from '../ledger-common.js';
import { attestationSha256, evidenceSha256 } from '../record-views.js';
import type { AttestationRow, EvidenceRow, InclusionAnswer } from '../rows.js';
import type { Db } from './database.js';

/** How often pending leaves are integrated and a checkpoint signed. */
export const INTEGRATE_EVERY_MS = 250;
/** Pending leaves that start an integration at once rather than at the next tick. */
export const INTEGRATE_AT_PENDING = 1000;
/** Leaves read at a time during an integration. */
const INTEGRATE_SLICE = 4096;

export class LedgerStore {
  readonly #db: Db;
  readonly #prefix: string;
  readonly #key: SigningKey | null;
  readonly #nowMs: () => number;
  readonly #signers = new Map<number, Ed25519NoteSigner>();
  readonly #origins = new Map<number, string>();
  /** the integrated tree of each workspace, built on first integration */
  readonly #trees = new Map<number, CompactTree>();
  /** next leaf index per workspace within the current write attempt (cleared at each group's begin) */
  #next = new Map<number, number>();
  /** workspaces that may have leaves not integrated */
  readonly #dirty = new Set<number>();
  #pending = 0;
  #timer: NodeJS.Timeout | null = null;
  #soon = false;
  #closed = false;

  readonly #keyOf: Database.Statement<[string], number>;
  readonly #idOf: Database.Statement<[number], string>;
  readonly #maxLeaf: Database.Statement<[number, number], number | null>;
  readonly #insertLeaf: Database.Statement<[number, number, number, number, string, string, Buffer]>;
  readonly #leafOf: Database.Statement<[number, string], { leaf_index: number; entry: Buffer }>;
  readonly #leafAt: Database.Statement<[number, number], Buffer>;
  readonly #leavesFrom: Database.Statement<[number, number, number, number], { entry: Buffer }>;
  readonly #integrated: Database.Statement<[number], number>;
  readonly #setIntegrated: Database.Statement<[number, number]>;
  readonly #insertNode: Database.Statement<[number, number, number, Buffer]>;
  readonly #node: Database.Statement<[number, number, number], Buffer>;
  readonly #nodeRange: Database.Statement<[number, number, number, number], Buffer>;
  readonly #latest: Database.Statement<[number], { tree_size: number; note: string }>;
  readonly #checkpointAt: Database.Statement<[number, number], { tree_size: number; note: string }>;
  readonly #putCheckpoint: Database.Statement<[number, number, Buffer, string, number]>;
  readonly #cosignatures: Database.Statement<[number, number], string>;
  readonly #putCosignature: Database.Statement<[number, number, string, string, number]>;
  readonly #witnesses: Database.Statement<[number], { name: string; vkey: string }>;

  constructor(db: Db, options: LedgerOptions = {}) {
    this.#db = db;
    this.#prefix = options.originPrefix ?? 'govctl.local/ledger';
    ledgerOrigin(this.#prefix, 'check'); // a bad prefix fails at start, not at the first checkpoint
    this.#key = options.key ?? null;
    this.#nowMs = options.nowMs ?? Date.now;
    this.#keyOf = db.prepare<[string], number>('SELECT ws_key FROM workspace_keys WHERE workspace_id = ?').pluck();
    this.#idOf = db.prepare<[number], string>('SELECT workspace_id FROM workspace_keys WHERE ws_key = ?').pluck();
    // A leaf's rowid is (ws_key << 40) + leaf_index: reads by index are rowid reads.
    this.#maxLeaf = db
      .prepare<[number, number], number | null>(
        'SELECT leaf_index FROM ledger_leaves WHERE leaf_key >= (? << 40) AND leaf_key < ((? + 1) << 40) ORDER BY leaf_key DESC LIMIT 1',
      )
      .pluck();
    this.#insertLeaf = db.prepare('INSERT INTO ledger_leaves (leaf_key, ws_key, leaf_index, kind, record_id, entry) VALUES ((? << 40) + ?, ?, ?, ?, ?, ?)');
    this.#leafOf = db.prepare('SELECT leaf_index, entry FROM ledger_leaves WHERE ws_key = ? AND record_id = ?');
    this.#leafAt = db.prepare<[number, number], Buffer>('SELECT entry FROM ledger_leaves WHERE leaf_key = (? << 40) + ?').pluck();
    this.#leavesFrom = db.prepare('SELECT entry FROM ledger_leaves WHERE leaf_key >= (? << 40) + ? AND leaf_key < (? << 40) + ? ORDER BY leaf_key');
    this.#integrated = db.prepare<[number], number>('SELECT integrated_size FROM ledger_state WHERE ws_key = ?').pluck();
    this.#setIntegrated = db.prepare(
      'INSERT INTO ledger_state (ws_key, integrated_size) VALUES (?, ?) ON CONFLICT (ws_key) DO UPDATE SET integrated_size = excluded.integrated_size',
    );
    this.#insertNode = db.prepare('INSERT INTO ledger_nodes (ws_key, level, idx, hash) VALUES (?, ?, ?, ?)');
    this.#node = db.prepare<[number, number, number], Buffer>('SELECT hash FROM ledger_nodes WHERE ws_key = ? AND level = ? AND idx = ?').pluck();
    this.#nodeRange = db
      .prepare<[number, number, number, number], Buffer>('SELECT hash FROM ledger_nodes WHERE ws_key = ? AND level = ? AND idx >= ? AND idx < ? ORDER BY idx')
      .pluck();
    this.#latest = db.prepare('SELECT tree_size, note FROM ledger_checkpoints WHERE ws_key = ? ORDER BY tree_size DESC LIMIT 1');
    this.#checkpointAt = db.prepare('SELECT tree_size, note FROM ledger_checkpoints WHERE ws_key = ? AND tree_size = ?');
    this.#putCheckpoint = db.prepare(
      'INSERT INTO ledger_checkpoints (ws_key, tree_size, root, note, signed_ms) VALUES (?, ?, ?, ?, ?) ' +
        'ON CONFLICT (ws_key, tree_size) DO UPDATE SET note = excluded.note, signed_ms = excluded.signed_ms',
    );
    this.#cosignatures = db.prepare<[number, number], string>('SELECT line FROM ledger_cosignatures WHERE ws_key = ? AND tree_size = ? ORDER BY name').pluck();
    this.#putCosignature = db.prepare(
      'INSERT INTO ledger_cosignatures (ws_key, tree_size, name, line, added_ms) VALUES (?, ?, ?, ?, ?) ' +
        'ON CONFLICT (ws_key, tree_size, name) DO UPDATE SET line = excluded.line, added_ms = excluded.added_ms',
    );
    this.#witnesses = db.prepare('SELECT name, vkey FROM ledger_witnesses WHERE ws_key = ? AND revoked_ms IS NULL ORDER BY name');

    // Every workspace may have leaves a previous process stored but did not integrate.
    for (const key of db.prepare<[], number>('SELECT ws_key FROM workspace_keys').pluck().all()) this.#dirty.add(key);
  }

  /** Whether checkpoints are signed (a key was given). */
  get signing(): boolean {
    return this.#key !== null;
  }

  /** A workspace log's origin (and key name). */
  origin(workspaceId: string): string {
    return ledgerOrigin(this.#prefix, workspaceId);
  }

  #signer(wsKey: number, workspaceId: string): Ed25519NoteSigner | null {
    if (this.#key === null) return null;
    let signer = this.#signers.get(wsKey);
    if (!signer) {
      signer = new Ed25519NoteSigner(this.origin(workspaceId), this.#key);
      this.#signers.set(wsKey, signer);
    }
    return signer;
  }

  /**
   * Workspace id → integer key, remembered once read: keys are never changed or deleted (as in
   * EvidenceStore), and every write appends a leaf, so a query per write is saved.
   */
  readonly #keys = new Map<string, number>();

  #workspaceKey(workspaceId: string): number | undefined {
    let key = this.#keys.get(workspaceId);
    if (key === undefined) {
      key = this.#keyOf.get(workspaceId);
      if (key !== undefined) this.#keys.set(workspaceId, key);
    }
    return key;
  }

  #workspaceId(wsKey: number): string {
    let id = this.#origins.get(wsKey);
    if (id === undefined) {
      id = this.#idOf.get(wsKey)!;
      this.#origins.set(wsKey, id);
    }
    return id;
  }

  // ---- write path -------------------------------------------------------------------------

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
    const wsKey = this.#workspaceKey(workspaceId);
    if (wsKey === undefined) throw new Error(`workspace ${workspaceId} has no key: it was not provisioned`);
    let index = this.#next.get(wsKey);
    if (index === undefined) index = (this.#maxLeaf.get(wsKey, wsKey) ?? -1) + 1;
    const entry = ledgerEntry({ kind, id, workspace_id: workspaceId, received_at: receivedAt, sha256 });
    this.#insertLeaf.run(wsKey, index, wsKey, index, kind, id, Buffer.from(entry, 'utf8'));
    this.#next.set(wsKey, index + 1);
    this.#dirty.add(wsKey);
    this.#pending += 1;
    if (this.#pending >= INTEGRATE_AT_PENDING) this.#integrateSoon();
    return index;
  }

  /** {@link append} for a stored evidence row. */
  appendEvidence(row: EvidenceRow): number {
    return this.append('evidence', row.record_id, row.workspace_id, row.received_at, evidenceSha256(row));
  }

  /** {@link append} for a stored attestation row. */
  appendAttestation(row: AttestationRow): number {
    return this.append('attestation', row.attestation_id, row.workspace_id, row.received_at, attestationSha256(row));
  }

  // ---- integration ------------------------------------------------------------------------

  /** Starts the integration timer (the service); `every` for tests. */
  start(every = INTEGRATE_EVERY_MS): void {
    if (this.#timer !== null || this.#closed) return;
    this.#timer = setInterval(() => this.#safeIntegrate(), every);
    this.#timer.unref();
  }

  #integrateSoon(): void {
    if (this.#soon || this.#timer === null) return;
    this.#soon = true;
    // After the current group's COMMIT: append runs inside the writer's transaction.
    setImmediate(() => {
      this.#soon = false;
      this.#safeIntegrate();
    });
  }

  #safeIntegrate(): void {
    if (this.#closed || !this.#db.open) return;
    try {
      this.integrate();
    } catch {
      // Retried at the next tick: the leaves stay pending, and the trees in memory were not changed.
    }
  }

  /** Stored nodes; a leaf's hash (level 0) is computed from its stored entry, which is not duplicated as a node. */
  #readerOf(wsKey: number): HashReader {
    return (level, index) => {
      if (level === 0) {
        const entry = this.#leafAt.get(wsKey, index);
        if (entry === undefined) throw new LedgerQueryError('not_found', `leaf ${index} is not stored`);
        return leafHash(entry);
      }
      const hash = this.#node.get(wsKey, level, index);
      if (hash === undefined) throw new LedgerQueryError('not_found', `node ${level}/${index} is not stored`);
      return hash;
    };
  }

  /**
   * Integrates every pending leaf of every workspace and signs the new checkpoints, in one
   * transaction. Synchronous, so it never interleaves with a group commit.
   * @returns how many leaves were integrated
   */
  integrate(): number {
    if (this.#dirty.size === 0) return 0;
    const updated = new Map<number, CompactTree>();
    let count = 0;
    const dirty = [...this.#dirty];
    // Without its own fsync: everything an integration writes is recomputed from the leaves, which
    // their writes committed durably; the next write's commit (synchronous=FULL) syncs these WAL
    // frames too. A checkpoint lost to a power cut is signed again identically (same size, same
    // root, deterministic Ed25519), so nothing served can disagree with what follows.
    this.#db.pragma('synchronous = NORMAL');
    try {
      this.#integrateIn(dirty, updated, (n) => (count += n));
    } finally {
      this.#db.pragma('synchronous = FULL');
    }
    for (const [wsKey, tree] of updated) this.#trees.set(wsKey, tree);
    for (const wsKey of dirty) this.#dirty.delete(wsKey);
    this.#pending = 0;
    return count;
  }

  #integrateIn(dirty: readonly number[], updated: Map<number, CompactTree>, counted: (n: number) => void): void {
    this.#db.transaction(() => {
      for (const wsKey of dirty) {
        const integrated = this.#integrated.get(wsKey) ?? 0;
        const size = (this.#maxLeaf.get(wsKey, wsKey) ?? -1) + 1;
        if (size <= integrated) continue;
        // The tree kept is used only at the size stored: another connection (an admin command
        // logging a gate policy change) may have integrated since.
        const kept = this.#trees.get(wsKey);
        const tree = (kept !== undefined && kept.size === integrated ? kept : CompactTree.fromReader(integrated, this.#readerOf(wsKey))).clone();
        // In slices read with .all (better-sqlite3 runs no other statement while one iterates),
        // so that a backlog (a migrated database) never sits in memory at once.
        for (let from = integrated; from < size; from += INTEGRATE_SLICE) {
          for (const { entry } of this.#leavesFrom.all(wsKey, from, wsKey, Math.min(size, from + INTEGRATE_SLICE))) {
            const created = tree.append(leafHash(entry));
            // created[0] is the leaf itself: its entry is stored already (see #readerOf)
            for (let i = 1; i < created.length; i++) this.#insertNode.run(wsKey, created[i].level, created[i].index, created[i].hash);
          }
        }
        this.#setIntegrated.run(wsKey, size);
        const signer = this.#signer(wsKey, this.#workspaceId(wsKey));
        if (signer) this.#sign(wsKey, signer, size, tree.root());
        updated.set(wsKey, tree);
        counted(size - integrated);
      }
    })();
  }

  #sign(wsKey: number, signer: Ed25519NoteSigner, size: number, root: Buffer): string {
    const note = signCheckpoint({ origin: signer.name, size, rootHash: root, extensions: [] }, [signer]);
    this.#putCheckpoint.run(wsKey, size, root, note, this.#nowMs());
    return note;
  }

  /** Stops the timer and integrates what is pending (the store's close). */
  close(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#safeIntegrate();
    this.#closed = true;
  }

  // ---- reads ------------------------------------------------------------------------------

  #requireKey(workspaceId: string): number {
    const wsKey = this.#workspaceKey(workspaceId);
    if (wsKey === undefined) throw new LedgerQueryError('not_found', `no workspace ${workspaceId}`);
    return wsKey;
  }

  /** The integrated size of a workspace's tree. */
  size(workspaceId: string): number {
    return this.#integrated.get(this.#requireKey(workspaceId)) ?? 0;
  }

  /** The verifier key of a workspace's log. @throws LedgerQueryError `no_key` when the service has no log key */
  verifierKey(workspaceId: string): string {
    const signer = this.#signer(this.#requireKey(workspaceId), workspaceId);
    if (!signer) throw new LedgerQueryError('no_key', 'this service has no log key: checkpoints are not signed (see `govctl admin ledger-key create`)');
    return signer.verifierKey;
  }

  /**
   * The latest checkpoint as a signed note with every cosignature held for it. The empty tree's is
   * signed on first request; a checkpoint signed by a previous log key is signed again with the
   * current one (key rotation, docs/ledger.md).
   */
  checkpoint(workspaceId: string): string {
    const wsKey = this.#requireKey(workspaceId);
    const signer = this.#signer(wsKey, workspaceId);
    if (!signer) throw new LedgerQueryError('no_key', 'this service has no log key: checkpoints are not signed (see `govctl admin ledger-key create`)');
    let latest = this.#latest.get(wsKey);
    const size = this.#integrated.get(wsKey) ?? 0;
    if (latest === undefined || latest.tree_size < size || !signedBy(latest.note, signer)) {
      const root = size === 0 ? emptyRoot() : this.#rootAt(wsKey, size);
      latest = { tree_size: size, note: this.#sign(wsKey, signer, size, root) };
    }
    const lines = this.#cosignatures.all(wsKey, latest.tree_size);
    return lines.length === 0 ? latest.note : latest.note + lines.join('');
  }

  #rootAt(wsKey: number, size: number): Buffer {
    const tree = this.#trees.get(wsKey);
    if (tree && tree.size === size) return tree.root();
    return CompactTree.fromReader(size, this.#readerOf(wsKey)).root();
  }

  #checkSize(wsKey: number, value: number | undefined, field: string, atLeast: number): number {
    const integrated = this.#integrated.get(wsKey) ?? 0;
    if (value === undefined) return integrated;
    if (!Number.isSafeInteger(value) || value < atLeast) throw new LedgerQueryError('invalid', `${field} must be an integer of at least ${atLeast}`, field);
    if (value > integrated) throw new LedgerQueryError('not_found', `${field} ${value} is beyond the log's size ${integrated}`, field);
    return value;
  }

  /**
   * The inclusion proof of a record (by record id or attestation id) in the tree of `treeSize`
   * (default: the latest). Returns `{pending}` when the record has an index but is not integrated yet.
   */
  inclusion(workspaceId: string, id: string, treeSize?: number): InclusionAnswer | { pending: { id: string; leaf_index: number } } {
    const wsKey = this.#requireKey(workspaceId);
    const leaf = this.#leafOf.get(wsKey, id);
    if (!leaf) throw new LedgerQueryError('not_found', 'no record with this id in the workspace log', 'id');
    const integrated = this.#integrated.get(wsKey) ?? 0;
    if (leaf.leaf_index >= integrated) return { pending: { id, leaf_index: leaf.leaf_index } };
    const size = this.#checkSize(wsKey, treeSize, 'tree_size', 1);
    if (leaf.leaf_index >= size) throw new LedgerQueryError('invalid', `the record's leaf ${leaf.leaf_index} is not in a tree of size ${size}`, 'tree_size');
    const hashes = inclusionProof(leaf.leaf_index, size, this.#readerOf(wsKey)).map((hash) => hash.toString('base64'));
    return { id, leaf_index: leaf.leaf_index, tree_size: size, entry: leaf.entry.toString('utf8'), hashes };
  }

  /** The consistency proof between two sizes (0 ≤ from ≤ to ≤ the integrated size). */
  consistency(workspaceId: string, from: number, to: number): { from: number; to: number; hashes: string[] } {
    const wsKey = this.#requireKey(workspaceId);
    const toSize = this.#checkSize(wsKey, to, 'to', 0);
    const fromSize = this.#checkSize(wsKey, from, 'from', 0);
    if (fromSize > toSize) throw new LedgerQueryError('invalid', 'from must not be larger than to', 'from');
    return { from: fromSize, to: toSize, hashes: consistencyProof(fromSize, toSize, this.#readerOf(wsKey)).map((hash) => hash.toString('base64')) };
  }

  /** A hash tile's or entry bundle's bytes; `null` when the tree does not (yet) have it. */
  tile(workspaceId: string, tile: Tile): Buffer | null {
    const wsKey = this.#requireKey(workspaceId);
    const integrated = this.#integrated.get(wsKey) ?? 0;
    if (tile.level === 'entries') {
      const start = tile.index * TILE_WIDTH;
      if (start + tile.width > integrated) return null;
      const parts: Buffer[] = [];
      for (const { entry } of this.#leavesFrom.all(wsKey, start, wsKey, start + tile.width)) {
        const length = Buffer.alloc(2);
        length.writeUInt16BE(entry.length);
        parts.push(length, entry);
      }
      return Buffer.concat(parts);
    }
    const span = TILE_WIDTH ** tile.level; // leaves per hash of this tile level
    const first = tile.index * TILE_WIDTH;
    if ((first + tile.width) * span > integrated) return null;
    const hashes =
      tile.level === 0
        ? this.#leavesFrom.all(wsKey, first, wsKey, first + tile.width).map(({ entry }) => leafHash(entry))
        : this.#nodeRange.all(wsKey, tile.level * TILE_HEIGHT, first, first + tile.width);
    if (hashes.length !== tile.width) return null;
    return Buffer.concat(hashes);
  }

  /**
   * Stores the cosignatures of registered witnesses found on a note whose text is one of the
   * workspace's checkpoints. Lines by other keys are ignored.
   * @returns the names of the witnesses whose cosignature was stored
   * @throws LedgerQueryError `invalid` when the note is not a checkpoint of this log or no registered witness's signature verifies
   */
  addCosignatures(workspaceId: string, note: string): string[] {
    const wsKey = this.#requireKey(workspaceId);
    const { text, size } = cosignedCheckpoint(note);
    const vkeys = this.#witnesses.all(wsKey).map(({ vkey }) => vkey);
    const cosignatures = verifiedCosignatures(note, text, this.#checkpointAt.get(wsKey, size)?.note, vkeys);
    const now = this.#nowMs();
    this.#db.transaction(() => {
      for (const { name, line } of cosignatures) this.#putCosignature.run(wsKey, size, name, line, now);
    })();
    return cosignatures.map(({ name }) => name);
  }
}
