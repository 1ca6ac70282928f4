/**
 * The transparency log (docs/ledger.md): one append-only RFC 9162 Merkle tree per workspace, written
 * once over a {@link LogStorage} that each backend implements in SQL.
 *
 * - Write path (the backend's): a record's leaf index is assigned, and its entry stored, in the
 *   transaction that stores the record, so an acknowledged write has its index.
 * - Integration ({@link TransparencyLog.integrate}): every {@link INTEGRATE_EVERY_MS}, whoever may
 *   integrate (storage.claimIntegration) appends each workspace's pending leaves to a
 *   {@link CompactTree}, stores the complete subtrees they finish and signs a checkpoint. Each step
 *   is written only if the integrated size is still the one it started from, so two integrators
 *   (another process, a replica that lost its lease) can never both advance a tree.
 * - Reads: the nodes a proof, root or tile needs are named first (core's nodesRead), read in one
 *   call, and combined afterwards.
 *
 * The log's private key never touches the database (admin.ts, the log key): without it the tree is
 * still kept, but no checkpoint is signed.
 */
import {
  CompactTree,
  consistencyProof,
  Ed25519NoteSigner,
  emptyRoot,
  inclusionProof,
  leafHash,
  ledgerOrigin,
  nodeKey,
  nodesRead,
  signCheckpoint,
  TILE_HEIGHT,
  TILE_WIDTH,
  type HashReader,
  type NodeId,
  type StoredNode,
  type Tile,
} from '../../core/index.js';
import type { InclusionAnswer, WitnessInfo } from '../store/rows.js';
import type { LedgerStore } from '../store/store.js';
import { cosignedCheckpoint, LedgerQueryError, MAX_MERGE_DELAY_MS, signedBy, verifiedCosignatures, type LedgerOptions } from './notes.js';
import type { LogStorage } from './storage.js';

/** How often pending leaves are integrated and checkpoints signed: a quarter of the maximum merge delay. */
export const INTEGRATE_EVERY_MS = MAX_MERGE_DELAY_MS / 4;
/** Leaves integrated (and written) at a time, so that a backlog never sits in memory at once. */
const INTEGRATE_SLICE = 4096;

const NO_KEY = 'this service has no log key: checkpoints are not signed (see `govctl admin ledger-key create`)';

export class TransparencyLog implements LedgerStore {
  readonly #prefix: string;
  readonly #key: LedgerOptions['key'];
  readonly #nowMs: () => number;
  readonly #signers = new Map<string, Ed25519NoteSigner>();
  /** integrated trees built here, by workspace key (used only at the size stored) */
  readonly #trees = new Map<number, CompactTree>();
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<number> | null = null;
  #closed = false;

  constructor(
    readonly storage: LogStorage,
    options: LedgerOptions = {},
  ) {
    this.#prefix = options.originPrefix ?? 'govctl.local/ledger';
    ledgerOrigin(this.#prefix, 'check'); // a bad prefix fails at start, not at the first checkpoint
    this.#key = options.key ?? null;
    this.#nowMs = options.nowMs ?? Date.now;
  }

  /** Whether checkpoints are signed (a key was given). */
  get signing(): boolean {
    return this.#key !== null;
  }

  /** A workspace log's origin (and key name). */
  origin(workspaceId: string): string {
    return ledgerOrigin(this.#prefix, workspaceId);
  }

  #signer(workspaceId: string): Ed25519NoteSigner | null {
    if (this.#key === null || this.#key === undefined) return null;
    let signer = this.#signers.get(workspaceId);
    if (!signer) {
      signer = new Ed25519NoteSigner(this.origin(workspaceId), this.#key);
      this.#signers.set(workspaceId, signer);
    }
    return signer;
  }

  // ---- integration ------------------------------------------------------------------------------

  /** Starts the integration timer (the service); `every` for tests. */
  start(every = INTEGRATE_EVERY_MS): void {
    if (this.#timer !== null || this.#closed) return;
    this.#timer = setInterval(() => void this.#tick(), every);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    if (this.#running !== null || this.#closed) return;
    try {
      await this.integrate();
    } catch {
      // the database is away or busy: the leaves stay pending for the next tick, nothing is half-done
    }
  }

  /**
   * Integrates every workspace's pending leaves and signs the new checkpoints, when this process
   * may integrate. One integration runs at a time.
   * @returns how many leaves were integrated
   */
  integrate(): Promise<number> {
    if (this.#running !== null) return this.#running.then(() => this.integrate());
    this.#running = this.#integrateAll().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async #integrateAll(): Promise<number> {
    if (!(await this.storage.claimIntegration())) return 0;
    let count = 0;
    for (const wsKey of await this.storage.pendingWorkspaces()) count += await this.#integrateWorkspace(wsKey);
    return count;
  }

  async #integrateWorkspace(wsKey: number): Promise<number> {
    const { integrated, stored } = await this.storage.sizes(wsKey);
    if (stored <= integrated) return 0;
    const kept = this.#trees.get(wsKey);
    this.#trees.delete(wsKey);
    const tree = kept !== undefined && kept.size === integrated ? kept : await this.#treeAt(wsKey, integrated);
    const signer = this.#signer(await this.storage.workspaceId(wsKey));
    for (let from = integrated; from < stored; from += INTEGRATE_SLICE) {
      const to = Math.min(stored, from + INTEGRATE_SLICE);
      const entries = await this.storage.entries(wsKey, from, to);
      if (entries.length !== to - from) throw new Error(`workspace ${wsKey}: leaves ${from}..${to} are not all stored`);
      const nodes: StoredNode[] = [];
      for (const entry of entries) {
        // created[0] is the leaf itself: its entry is stored already
        const created = tree.append(leafHash(entry));
        for (let i = 1; i < created.length; i++) nodes.push(created[i]);
      }
      const checkpoint = to === stored && signer !== null ? this.#signed(signer, to, tree.root()) : undefined;
      const written = await this.storage.writeIntegration(wsKey, { from, to, nodes, ...(checkpoint ? { checkpoint } : {}) }, this.#nowMs());
      if (!written) return from - integrated; // another integrator moved the tree on: it is read again next time
    }
    this.#trees.set(wsKey, tree);
    return stored - integrated;
  }

  #signed(signer: Ed25519NoteSigner, size: number, root: Buffer): { root: Buffer; note: string } {
    return { root, note: signCheckpoint({ origin: signer.name, size, rootHash: root, extensions: [] }, [signer]) };
  }

  /** Stops the timer, integrates what is pending and gives the claim to integrate up (the store's close). */
  async close(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.integrate();
      await this.storage.releaseIntegration();
    } catch {
      // the database is away: the leaves stay pending, and a claim expires by itself
    }
  }

  // ---- reads ------------------------------------------------------------------------------------

  /** A reader over exactly `nodes`, read in one call per kind (leaves: hashed from their entries). */
  async #reader(wsKey: number, nodes: readonly NodeId[]): Promise<HashReader> {
    const found = new Map<string, Uint8Array>();
    const leaves = nodes.filter((node) => node.level === 0).map((node) => node.index);
    const inner = nodes.filter((node) => node.level > 0);
    if (leaves.length > 0) for (const [index, entry] of await this.storage.entriesAt(wsKey, leaves)) found.set(nodeKey(0, index), leafHash(entry));
    if (inner.length > 0) for (const [key, hash] of await this.storage.hashes(wsKey, inner)) found.set(key, hash);
    return (level, index) => {
      const hash = found.get(nodeKey(level, index));
      if (hash === undefined) throw new LedgerQueryError('not_found', level === 0 ? `leaf ${index} is not stored` : `node ${level}/${index} is not stored`);
      return hash;
    };
  }

  /** Runs a proof computation over the nodes it asks for, read first. */
  async #compute<T>(wsKey: number, compute: (read: HashReader) => T): Promise<T> {
    return compute(await this.#reader(wsKey, nodesRead(compute)));
  }

  /** The integrated tree of `size` leaves, from its stored edge nodes. */
  async #treeAt(wsKey: number, size: number): Promise<CompactTree> {
    return CompactTree.fromReader(size, await this.#reader(wsKey, CompactTree.edgeNodes(size)));
  }

  async #rootAt(wsKey: number, size: number): Promise<Buffer> {
    const tree = this.#trees.get(wsKey);
    if (tree && tree.size === size) return tree.root();
    return (await this.#treeAt(wsKey, size)).root();
  }

  async #requireKey(workspaceId: string): Promise<number> {
    const wsKey = await this.storage.workspaceKey(workspaceId);
    if (wsKey === undefined) throw new LedgerQueryError('not_found', `no workspace ${workspaceId}`);
    return wsKey;
  }

  async #integrated(wsKey: number): Promise<number> {
    return (await this.storage.sizes(wsKey)).integrated;
  }

  /** The integrated size of a workspace's tree. */
  async size(workspaceId: string): Promise<number> {
    return this.#integrated(await this.#requireKey(workspaceId));
  }

  /** The verifier key of a workspace's log. @throws LedgerQueryError `no_key` when the service has no log key */
  async verifierKey(workspaceId: string): Promise<string> {
    await this.#requireKey(workspaceId);
    const signer = this.#signer(workspaceId);
    if (!signer) throw new LedgerQueryError('no_key', NO_KEY);
    return signer.verifierKey;
  }

  /**
   * The latest checkpoint as a signed note with every cosignature held for it. When none is stored
   * for the integrated size yet (the empty tree), or it was signed by a previous log key (key
   * rotation, docs/ledger.md), it is signed now: the same bytes any process would sign
   * (deterministic Ed25519).
   */
  async checkpoint(workspaceId: string): Promise<string> {
    const wsKey = await this.#requireKey(workspaceId);
    const signer = this.#signer(workspaceId);
    if (!signer) throw new LedgerQueryError('no_key', NO_KEY);
    let latest = await this.storage.latestCheckpoint(wsKey);
    const size = await this.#integrated(wsKey);
    if (latest === undefined || latest.size < size || !signedBy(latest.note, signer)) {
      const { root, note } = this.#signed(signer, size, size === 0 ? emptyRoot() : await this.#rootAt(wsKey, size));
      await this.storage.putCheckpoint(wsKey, size, root, note, this.#nowMs());
      latest = { size, note };
    }
    const lines = await this.storage.cosignatures(wsKey, latest.size);
    return lines.length === 0 ? latest.note : latest.note + lines.join('');
  }

  async #checkSize(wsKey: number, value: number | undefined, field: string, atLeast: number): Promise<number> {
    const integrated = await this.#integrated(wsKey);
    if (value === undefined) return integrated;
    if (!Number.isSafeInteger(value) || value < atLeast) throw new LedgerQueryError('invalid', `${field} must be an integer of at least ${atLeast}`, field);
    if (value > integrated) throw new LedgerQueryError('not_found', `${field} ${value} is beyond the log's size ${integrated}`, field);
    return value;
  }

  /**
   * The inclusion proof of a record (by record id or attestation id) in the tree of `treeSize`
   * (default: the latest). Returns `{pending}` when the record has an index but is not integrated yet.
   */
  async inclusion(workspaceId: string, id: string, treeSize?: number): Promise<InclusionAnswer | { pending: { id: string; leaf_index: number } }> {
    const wsKey = await this.#requireKey(workspaceId);
    const leaf = await this.storage.leafOf(wsKey, id);
    if (!leaf) throw new LedgerQueryError('not_found', 'no record with this id in the workspace log', 'id');
    const integrated = await this.#integrated(wsKey);
    if (leaf.leafIndex >= integrated) return { pending: { id, leaf_index: leaf.leafIndex } };
    const size = await this.#checkSize(wsKey, treeSize, 'tree_size', 1);
    if (leaf.leafIndex >= size) throw new LedgerQueryError('invalid', `the record's leaf ${leaf.leafIndex} is not in a tree of size ${size}`, 'tree_size');
    const proof = await this.#compute(wsKey, (read) => inclusionProof(leaf.leafIndex, size, read));
    return { id, leaf_index: leaf.leafIndex, tree_size: size, entry: leaf.entry.toString('utf8'), hashes: proof.map((hash) => hash.toString('base64')) };
  }

  /** The consistency proof between two sizes (0 ≤ from ≤ to ≤ the integrated size). */
  async consistency(workspaceId: string, from: number, to: number): Promise<{ from: number; to: number; hashes: string[] }> {
    const wsKey = await this.#requireKey(workspaceId);
    const toSize = await this.#checkSize(wsKey, to, 'to', 0);
    const fromSize = await this.#checkSize(wsKey, from, 'from', 0);
    if (fromSize > toSize) throw new LedgerQueryError('invalid', 'from must not be larger than to', 'from');
    const proof = await this.#compute(wsKey, (read) => consistencyProof(fromSize, toSize, read));
    return { from: fromSize, to: toSize, hashes: proof.map((hash) => hash.toString('base64')) };
  }

  /** A hash tile's or entry bundle's bytes; `null` when the tree does not (yet) have it. */
  async tile(workspaceId: string, tile: Tile): Promise<Buffer | null> {
    const wsKey = await this.#requireKey(workspaceId);
    const integrated = await this.#integrated(wsKey);
    const first = tile.index * TILE_WIDTH;
    if (tile.level === 'entries') {
      if (first + tile.width > integrated) return null;
      const entries = await this.storage.entries(wsKey, first, first + tile.width);
      if (entries.length !== tile.width) return null;
      const parts: Buffer[] = [];
      for (const entry of entries) {
        const length = Buffer.alloc(2);
        length.writeUInt16BE(entry.length);
        parts.push(length, entry);
      }
      return Buffer.concat(parts);
    }
    const span = TILE_WIDTH ** tile.level; // leaves per hash of this tile level
    if ((first + tile.width) * span > integrated) return null;
    const hashes =
      tile.level === 0
        ? (await this.storage.entries(wsKey, first, first + tile.width)).map((entry) => leafHash(entry))
        : await this.storage.hashRange(wsKey, tile.level * TILE_HEIGHT, first, first + tile.width);
    if (hashes.length !== tile.width) return null;
    return Buffer.concat(hashes);
  }

  /**
   * Stores the cosignatures of registered witnesses found on a note whose text is one of the
   * workspace's checkpoints. Lines by other keys are ignored.
   * @returns the names of the witnesses whose cosignature was stored
   * @throws LedgerQueryError `invalid` when the note is not a checkpoint of this log or no registered witness's signature verifies
   */
  async addCosignatures(workspaceId: string, note: string): Promise<string[]> {
    const wsKey = await this.#requireKey(workspaceId);
    const { text, size } = cosignedCheckpoint(note);
    const stored = await this.storage.checkpointAt(wsKey, size);
    const cosignatures = verifiedCosignatures(note, text, stored, await this.storage.witnessKeys(wsKey));
    if (cosignatures.length > 0) await this.storage.putCosignatures(wsKey, size, cosignatures, this.#nowMs());
    return cosignatures.map(({ name }) => name);
  }

  addWitness(workspaceId: string, name: string, vkey: string, nowMs: number): Promise<WitnessInfo | null> {
    return this.storage.addWitness(workspaceId, name, vkey, nowMs);
  }

  listWitnesses(workspaceId?: string): Promise<WitnessInfo[] | null> {
    return this.storage.listWitnesses(workspaceId);
  }

  revokeWitness(workspaceId: string, name: string, nowMs: number): Promise<WitnessInfo | null> {
    return this.storage.revokeWitness(workspaceId, name, nowMs);
  }
}
