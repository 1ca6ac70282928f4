/**
 * The RFC 9162 (= RFC 6962) Merkle tree: leaf and node hashes, the tree head MTH, inclusion
 * proofs (PATH, §2.1.3) and consistency proofs (PROOF/SUBPROOF, §2.1.4) with their verification
 * algorithms (§2.1.3.2, §2.1.4.2).
 *
 * Storage model: a log never holds its whole tree. It stores the hash of every *complete* subtree,
 * named (level, index): the subtree of 2^level leaves starting at leaf index·2^level. Every hash
 * the RFC recursion needs is either such a node or a fold of a few of them along the right edge,
 * so roots and proofs are computed through a {@link HashReader}. {@link CompactTree} is the
 * append-only state that yields those nodes as leaves are appended (for batched integration) and
 * the root in O(log n) memory (for an audit that streams every leaf).
 *
 * Tree sizes and indexes are plain numbers (safe integers): arithmetic, never 32-bit bit operations.
 */
import { createHash, hash as digest } from 'node:crypto';

export const HASH_SIZE = 32;

/** Scratch space for one node hash's input; hashing is synchronous, so one buffer serves every call. */
const NODE_INPUT = Buffer.alloc(1 + 2 * 32, 0x01);

/** A complete subtree's coordinates: 2^level leaves from leaf index·2^level. */
export interface NodeId {
  readonly level: number;
  readonly index: number;
}

/** A complete subtree and its hash, as {@link CompactTree.append} hands them out for storing. */
export interface StoredNode extends NodeId {
  readonly hash: Buffer;
}

/** Reads the stored hash of a complete subtree; throws if the store does not have it. */
export type HashReader = (level: number, index: number) => Uint8Array;

// One-shot crypto.hash is about 1.6× faster than createHash here (millions of calls in an audit).

/** SHA-256(0x00 ‖ entry): the hash of a leaf (a string is hashed as its UTF-8 bytes). */
export function leafHash(entry: Uint8Array | string): Buffer {
  const bytes = typeof entry === 'string' ? Buffer.from(entry, 'utf8') : entry;
  const input = Buffer.allocUnsafe(1 + bytes.length);
  input[0] = 0x00;
  input.set(bytes, 1);
  return digest('sha256', input, 'buffer');
}

/** SHA-256(0x01 ‖ left ‖ right): the hash of an interior node. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  if (left.length !== HASH_SIZE || right.length !== HASH_SIZE) throw new RangeError('a node hash joins two 32-byte hashes');
  NODE_INPUT.set(left, 1);
  NODE_INPUT.set(right, 1 + HASH_SIZE);
  return digest('sha256', NODE_INPUT, 'buffer');
}

/** MTH({}) = SHA-256(), the root of the empty tree. */
export function emptyRoot(): Buffer {
  return createHash('sha256').digest();
}

/** The largest power of two strictly below n (n ≥ 2): RFC 9162's split point k. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
}

function checkSize(name: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative safe integer, not ${n}`);
}

/** A stable string key for a node, for maps and SQL: `<level>/<index>`. */
export function nodeKey(level: number, index: number): string {
  return `${level}/${index}`;
}

/** A {@link HashReader} over a map filled with {@link nodeKey} keys, e.g. from prefetched rows. */
export function mapReader(nodes: ReadonlyMap<string, Uint8Array>): HashReader {
  return (level, index) => {
    const hash = nodes.get(nodeKey(level, index));
    if (!hash) throw new RangeError(`node ${nodeKey(level, index)} is not stored`);
    return hash;
  };
}

/**
 * The hash of the leaves [lo, hi) as the RFC recursion forms it: a stored node when the range is
 * a complete aligned subtree, else the node hash of its split (the right part is the right edge).
 * Only ranges the RFC recursion produces are valid here; any other throws.
 */
export function rangeHash(lo: number, hi: number, read: HashReader): Buffer {
  const n = hi - lo;
  if (n <= 0) throw new RangeError(`empty range [${lo}, ${hi})`);
  if (isPowerOfTwo(n)) {
    if (lo % n !== 0) throw new RangeError(`range [${lo}, ${hi}) is not an aligned subtree`);
    let level = 0;
    for (let k = 1; k < n; k *= 2) level += 1;
    return Buffer.from(read(level, lo / n));
  }
  const k = splitPoint(n);
  if (lo % k !== 0) throw new RangeError(`range [${lo}, ${hi}) is not a subtree of an RFC 9162 tree`);
  return nodeHash(rangeHash(lo, lo + k, read), rangeHash(lo + k, hi, read));
}

/** MTH(D[0:size]) from stored nodes. */
export function rootHash(size: number, read: HashReader): Buffer {
  checkSize('tree size', size);
  return size === 0 ? emptyRoot() : rangeHash(0, size, read);
}

/**
 * PATH(index, D[0:size]) (RFC 9162 §2.1.3.1): the inclusion proof of a leaf, the leaf's sibling first.
 * @throws RangeError unless 0 ≤ index < size
 */
export function inclusionProof(index: number, size: number, read: HashReader): Buffer[] {
  checkSize('tree size', size);
  checkSize('leaf index', index);
  if (index >= size) throw new RangeError(`leaf index ${index} is not below tree size ${size}`);
  const fromRoot: Buffer[] = [];
  let lo = 0;
  let hi = size;
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    if (index < lo + k) {
      fromRoot.push(rangeHash(lo + k, hi, read));
      hi = lo + k;
    } else {
      fromRoot.push(rangeHash(lo, lo + k, read));
      lo += k;
    }
  }
  return fromRoot.reverse();
}

/**
 * PROOF(from, D[0:to]) (RFC 9162 §2.1.4.1, SUBPROOF with b = true). For from = to and for
 * from = 0 the proof is empty (RFC 9162 defines proofs for 0 < from < to; see docs/ledger.md).
 * @throws RangeError unless 0 ≤ from ≤ to
 */
export function consistencyProof(from: number, to: number, read: HashReader): Buffer[] {
  checkSize('tree size', from);
  checkSize('tree size', to);
  if (from > to) throw new RangeError(`tree size ${from} is larger than ${to}`);
  if (from === 0 || from === to) return [];
  const fromRoot: Buffer[] = [];
  let lo = 0;
  let hi = to;
  let complete = true; // SUBPROOF's b: whether D[lo:hi]'s first `from - lo` leaves are the whole old tree's part
  for (;;) {
    if (from === hi) {
      if (!complete) fromRoot.push(rangeHash(lo, hi, read));
      break;
    }
    const k = splitPoint(hi - lo);
    if (from - lo <= k) {
      fromRoot.push(rangeHash(lo + k, hi, read));
      hi = lo + k;
    } else {
      fromRoot.push(rangeHash(lo, lo + k, read));
      lo += k;
      complete = false;
    }
  }
  return fromRoot.reverse();
}

/** Every stored node a computation reads, in order: how a caller prefetches (e.g. one SQL query) before computing. */
export function nodesRead(compute: (read: HashReader) => unknown): NodeId[] {
  const seen = new Set<string>();
  const nodes: NodeId[] = [];
  const zero = Buffer.alloc(HASH_SIZE);
  compute((level, index) => {
    const key = nodeKey(level, index);
    if (!seen.has(key)) {
      seen.add(key);
      nodes.push({ level, index });
    }
    return zero;
  });
  return nodes;
}

function isHash(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.length === HASH_SIZE;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

/**
 * The root an inclusion proof leads to (RFC 9162 §2.1.3.2 steps 1–4), or null when the proof
 * cannot be for this index and size (wrong length, a malformed hash, index ≥ size).
 */
export function rootFromInclusionProof(index: number, size: number, leaf: Uint8Array, proof: readonly Uint8Array[]): Buffer | null {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return null;
  if (!isHash(leaf) || !proof.every(isHash)) return null;
  let fn = index;
  let sn = size - 1;
  let r: Buffer = Buffer.from(leaf);
  for (const p of proof) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn /= 2;
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null;
}

/** RFC 9162 §2.1.3.2: whether `proof` proves the leaf hash at `index` in the tree of `size` with `root`. */
export function verifyInclusion(index: number, size: number, leaf: Uint8Array, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  const computed = rootFromInclusionProof(index, size, leaf, proof);
  return computed !== null && isHash(root) && equalBytes(computed, root);
}

/**
 * RFC 9162 §2.1.4.2: whether `proof` proves that the tree of size `to` with root `toRoot` extends
 * the tree of size `from` with root `fromRoot`. from = to needs an empty proof and equal roots;
 * from = 0 needs an empty proof and the empty tree's root.
 */
export function verifyConsistency(from: number, to: number, proof: readonly Uint8Array[], fromRoot: Uint8Array, toRoot: Uint8Array): boolean {
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || from > to) return false;
  if (!isHash(fromRoot) || !isHash(toRoot) || !proof.every(isHash)) return false;
  if (from === 0) return proof.length === 0 && equalBytes(fromRoot, emptyRoot());
  if (from === to) return proof.length === 0 && equalBytes(fromRoot, toRoot);
  // 1. An empty path fails. 2. A power-of-two old tree is a node of the new one: its root starts the path.
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(from) ? [fromRoot, ...proof] : [...proof];
  // 3.–4.
  let fn = from - 1;
  let sn = to - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  // 5.
  let fr: Buffer = Buffer.from(path[0]);
  let sr: Buffer = Buffer.from(path[0]);
  // 6.
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn /= 2;
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  // 7.
  return sn === 0 && equalBytes(fr, fromRoot) && equalBytes(sr, toRoot);
}

/**
 * The append-only state of a tree: its size and the roots of the complete subtrees along its right
 * edge (one per set bit of the size, largest first), O(log n) hashes. Appending a leaf returns the
 * complete subtrees it completes — exactly the new rows a store keeps — and {@link root} is the
 * tree head. An auditor streams every leaf through it in constant memory.
 */
export class CompactTree {
  #size: number;
  readonly #edge: Buffer[];

  private constructor(size: number, edge: Buffer[]) {
    this.#size = size;
    this.#edge = edge;
  }

  /** The empty tree. */
  static empty(): CompactTree {
    return new CompactTree(0, []);
  }

  /** The state of a stored tree of `size` leaves, from its stored nodes (at most log2(size) reads). */
  static fromReader(size: number, read: HashReader): CompactTree {
    checkSize('tree size', size);
    return new CompactTree(
      size,
      CompactTree.edgeNodes(size).map((node) => Buffer.from(read(node.level, node.index))),
    );
  }

  /** The complete subtrees whose roots make up the right edge of a tree of `size`, left to right. */
  static edgeNodes(size: number): NodeId[] {
    checkSize('tree size', size);
    const nodes: NodeId[] = [];
    let start = 0;
    let width = 1;
    while (width * 2 <= size) width *= 2;
    let level = Math.round(Math.log2(width));
    for (; width >= 1; width /= 2, level -= 1) {
      if (size - start >= width) {
        nodes.push({ level, index: start / width });
        start += width;
      }
    }
    return nodes;
  }

  get size(): number {
    return this.#size;
  }

  /** The right edge, as stored nodes. */
  edge(): StoredNode[] {
    return CompactTree.edgeNodes(this.#size).map((node, i) => ({ ...node, hash: this.#edge[i] }));
  }

  /** Appends a leaf by its hash; returns the complete subtrees it completes, the leaf (level 0) first. */
  append(leaf: Uint8Array): StoredNode[] {
    if (!isHash(leaf)) throw new RangeError('a leaf hash is 32 bytes');
    let hash: Buffer = Buffer.from(leaf);
    let index = this.#size;
    let level = 0;
    const created: StoredNode[] = [{ level, index, hash }];
    while (index % 2 === 1) {
      hash = nodeHash(this.#edge.pop()!, hash);
      index = (index - 1) / 2;
      level += 1;
      created.push({ level, index, hash });
    }
    this.#edge.push(hash);
    this.#size += 1;
    return created;
  }

  /** The tree head MTH(D[0:size]). */
  root(): Buffer {
    if (this.#edge.length === 0) return emptyRoot();
    let hash = this.#edge[this.#edge.length - 1];
    for (let i = this.#edge.length - 2; i >= 0; i -= 1) hash = nodeHash(this.#edge[i], hash);
    return hash;
  }

  /** An independent copy (e.g. to compute a candidate head before committing a batch). */
  clone(): CompactTree {
    return new CompactTree(this.#size, [...this.#edge]);
  }
}
