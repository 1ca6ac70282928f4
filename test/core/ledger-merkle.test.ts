/**
 * RFC 9162 Merkle trees against test/core/ledger_reference.py, an independent Python
 * implementation of the RFC's recursive definitions: roots of every tree size 1..600, inclusion
 * and consistency proofs (all of them for sizes ≤ 64, a spread above), two large trees whose
 * leaves are generated rather than stored, and verification that rejects tampered proofs.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CompactTree,
  consistencyProof,
  emptyRoot,
  inclusionProof,
  leafHash,
  mapReader,
  nodeHash,
  nodeKey,
  nodesRead,
  rootFromInclusionProof,
  rootHash,
  splitPoint,
  verifyConsistency,
  verifyInclusion,
  type HashReader,
} from '../../src/core/ledger/index.js';
import { runReference } from './ledger-python.js';

const MAX = 600;
const LEAF_PREFIX = 'leaf-';
const LARGE_PREFIX = 'large-';

/** A spread of values in [lo, hi]: the ends, the middle, around the split point, and a few more. */
function spread(lo: number, hi: number, n: number): number[] {
  const k = n > 1 ? splitPoint(n) : 1;
  const picks = [lo, lo + 1, hi - 1, hi, Math.floor((lo + hi) / 2), k - 1, k, k + 1, lo + ((n * 7919) % (hi - lo + 1)), lo + ((n * 104729) % (hi - lo + 1))];
  return [...new Set(picks.filter((v) => v >= lo && v <= hi))].sort((a, b) => a - b);
}

const inclusionCases: [number, number][] = [];
const consistencyCases: [number, number][] = [];
for (let n = 1; n <= MAX; n++) {
  if (n <= 64) {
    for (let i = 0; i < n; i++) inclusionCases.push([i, n]);
    for (let m = 1; m <= n; m++) consistencyCases.push([m, n]);
  } else {
    for (const i of spread(0, n - 1, n)) inclusionCases.push([i, n]);
    for (const m of spread(1, n, n)) consistencyCases.push([m, n]);
  }
}

interface LargeCase {
  size: number;
  inclusion: number[];
  consistency: number[];
}
/**
 * Two sizes past 2^16 leaves, so that a level-16 node (a level-2 tile's worth) exists above the
 * level-8 nodes a log keeps, both odd so that the right edge is ragged down to a single leaf.
 * 65 537 = 2^16 + 1: one full level-16 subtree and a lone leaf. 150 001 = 2^17 + 2^14 + 2^11 + 2^8
 * + 2^7 + 2^6 + 2^5 + 2^4 + 1: two level-16 nodes under a level-17 one, and edge nodes on both
 * sides of the kept level 8, so that proofs mix stored nodes with ones recomputed from leaves. A
 * larger tree crosses no further level (the next, 24, needs 2^24 leaves) and only costs hashing.
 */
const LARGE: LargeCase[] = [
  { size: 65_537, inclusion: [0, 1, 32_768, 65_535, 65_536], consistency: [1, 255, 256, 65_535, 65_536, 65_537] },
  { size: 150_001, inclusion: [0, 131_072, 149_999, 150_000], consistency: [1, 65_537, 131_072, 149_999] },
];

interface MerkleAnswer {
  merkle: {
    roots: string[];
    inclusion: string[][];
    consistency: string[][];
    large: { root: string; inclusion: string[][]; consistency: { root: string; proof: string[] }[] }[];
  };
}

// Python starts now and works while the product computes its side.
const reference = runReference<MerkleAnswer>({
  merkle: {
    leaf_prefix: LEAF_PREFIX,
    max_size: MAX,
    inclusion: inclusionCases,
    consistency: consistencyCases,
    large: LARGE.map((c) => ({ ...c, leaf_prefix: LARGE_PREFIX })),
  },
});

const hex = (hashes: readonly Uint8Array[]) => hashes.map((h) => Buffer.from(h).toString('hex'));
const unhex = (hashes: readonly string[]) => hashes.map((h) => Buffer.from(h, 'hex'));

/**
 * `check(proof)` with one bit of `proof[at]` flipped, then the bit put back: the rejection tests
 * flip every hash of every proof, and a copy of the whole proof per flip cost more than the check.
 */
function withFlippedBit<T>(proof: Buffer[], at: number, byte: number, bit: number, check: (bad: Buffer[]) => T): T {
  proof[at][byte] ^= 1 << bit;
  try {
    return check(proof);
  } finally {
    proof[at][byte] ^= 1 << bit;
  }
}

/** The product's store for the 600-leaf tree: every complete subtree, as a log would keep it. */
const nodes = new Map<string, Buffer>();
const tree = CompactTree.empty();
const rootsByAppend: Buffer[] = [tree.root()];
for (let i = 0; i < MAX; i++) {
  for (const node of tree.append(leafHash(`${LEAF_PREFIX}${i}`))) nodes.set(nodeKey(node.level, node.index), node.hash);
  rootsByAppend.push(tree.root());
}
const read = mapReader(nodes);

let answer: MerkleAnswer['merkle'];
/** The reference's roots, inclusion and consistency proofs as bytes, decoded once for every test. */
let refRoots: Buffer[];
let refInclusion: Buffer[][];
let refConsistency: Buffer[][];
beforeAll(async () => {
  answer = (await reference).merkle;
  refRoots = answer.roots.map((h) => Buffer.from(h, 'hex'));
  refInclusion = answer.inclusion.map(unhex);
  refConsistency = answer.consistency.map(unhex);
}, 60_000);

describe('Merkle tree heads (RFC 9162 §2.1.1)', () => {
  it('match the reference for every tree size 0..600, both appended and read from stored nodes', () => {
    expect(answer.roots[0]).toBe(emptyRoot().toString('hex'));
    expect(hex(rootsByAppend)).toEqual(answer.roots);
    const fromStore = Array.from({ length: MAX + 1 }, (_, n) => rootHash(n, read));
    expect(hex(fromStore)).toEqual(answer.roots);
  });

  it('resume from stored nodes: a tree rebuilt at any size and appended to reaches the same heads', () => {
    for (const size of [0, 1, 2, 3, 255, 256, 257, 511, 599]) {
      const resumed = CompactTree.fromReader(size, read);
      expect(resumed.root().toString('hex')).toBe(answer.roots[size]);
      const heads: string[] = [];
      for (let i = size; i < Math.min(MAX, size + 70); i++) {
        resumed.append(leafHash(`${LEAF_PREFIX}${i}`));
        heads.push(resumed.root().toString('hex'));
      }
      expect(heads, `resumed at ${size}`).toEqual(answer.roots.slice(size + 1, Math.min(MAX, size + 70) + 1));
    }
  });

  it('append returns exactly the complete subtrees a leaf completes', () => {
    const t = CompactTree.empty();
    const created = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => t.append(leafHash(`${LEAF_PREFIX}${i}`)).map((n) => nodeKey(n.level, n.index)));
    expect(created).toEqual([['0/0'], ['0/1', '1/0'], ['0/2'], ['0/3', '1/1', '2/0'], ['0/4'], ['0/5', '1/2'], ['0/6'], ['0/7', '1/3', '2/1', '3/0']]);
    expect(CompactTree.edgeNodes(13)).toEqual([
      { level: 3, index: 0 },
      { level: 2, index: 2 },
      { level: 0, index: 12 },
    ]);
  });
});

describe('inclusion proofs (RFC 9162 §2.1.3)', () => {
  it(`match the reference PATH for ${inclusionCases.length} (index, size) pairs and verify against its roots`, () => {
    const mine = inclusionCases.map(([i, n]) => hex(inclusionProof(i, n, read)));
    expect(mine).toEqual(answer.inclusion);
    // Collected and asserted once: an expect() per case cost more than the verification.
    const refused: string[] = [];
    inclusionCases.forEach(([i, n], c) => {
      if (verifyInclusion(i, n, leafHash(`${LEAF_PREFIX}${i}`), refInclusion[c], refRoots[n]) !== true) refused.push(`index ${i} size ${n}`);
    });
    expect(refused).toEqual([]);
  });

  it('reject a flipped bit, a wrong index, a wrong size, a wrong leaf, a missing or an extra hash', () => {
    let rejected = 0;
    const accepted: string[] = [];
    inclusionCases.forEach(([i, n], c) => {
      const proof = refInclusion[c];
      const leaf = leafHash(`${LEAF_PREFIX}${i}`);
      const root = refRoots[n];
      const fails = (index: number, size: number, l: Buffer, p: Buffer[], r: Buffer) => {
        if (verifyInclusion(index, size, l, p, r) !== false) accepted.push(`case ${c}: index ${index} size ${size}`);
        rejected++;
      };
      proof.forEach((_, at) => withFlippedBit(proof, at, (i + at) % 32, c % 8, (bad) => fails(i, n, leaf, bad, root)));
      if (i + 1 < n) fails(i + 1, n, leaf, proof, root);
      if (i > 0) fails(i - 1, n, leaf, proof, root);
      if (n < MAX) fails(i, n + 1, leaf, proof, refRoots[n + 1]);
      if (n > 1 && i < n - 1) fails(i, n - 1, leaf, proof, refRoots[n - 1]);
      fails(i, n, leafHash(`${LEAF_PREFIX}${i + 1}`), proof, root);
      if (proof.length > 0) fails(i, n, leaf, proof.slice(0, -1), root);
      fails(i, n, leaf, [...proof, leaf], root);
      fails(n, n, leaf, proof, root);
    });
    expect(accepted).toEqual([]);
    expect(rejected).toBeGreaterThan(inclusionCases.length * 6);
    expect(rootFromInclusionProof(0, 1, Buffer.alloc(31), [])).toBeNull();
  });
});

describe('consistency proofs (RFC 9162 §2.1.4)', () => {
  it(`match the reference PROOF for ${consistencyCases.length} (from, to) pairs and verify against its roots`, () => {
    const mine = consistencyCases.map(([m, n]) => hex(consistencyProof(m, n, read)));
    expect(mine).toEqual(answer.consistency);
    const refused: string[] = [];
    consistencyCases.forEach(([m, n], c) => {
      const ok = verifyConsistency(m, n, refConsistency[c], refRoots[m], refRoots[n]);
      if (ok !== true) refused.push(`${m} → ${n}`);
    });
    expect(refused).toEqual([]);
  });

  it('reject a flipped bit, wrong sizes, swapped or foreign roots, a missing or an extra hash', () => {
    const root = (n: number) => refRoots[n];
    const accepted: string[] = [];
    let rejected = 0;
    consistencyCases.forEach(([m, n], c) => {
      const proof = refConsistency[c];
      const fails = (from: number, to: number, p: Buffer[], a: Buffer, b: Buffer) => {
        if (verifyConsistency(from, to, p, a, b) !== false) accepted.push(`case ${c}: ${from} → ${to}`);
        rejected++;
      };
      proof.forEach((_, at) => withFlippedBit(proof, at, (m + at) % 32, c % 8, (bad) => fails(m, n, bad, root(m), root(n))));
      if (m > 1) fails(m - 1, n, proof, root(m - 1), root(n));
      if (m < n) {
        fails(m + 1, n, proof, root(m + 1), root(n));
        fails(m, n, proof, root(n), root(m));
        fails(m, n - 1, proof, root(m), root(n - 1));
        fails(m, n, proof, root(m), root(n - 1));
        fails(m, n, proof, leafHash('not the old tree'), root(n));
      }
      if (n < MAX) fails(m, n + 1, proof, root(m), root(n + 1));
      if (proof.length > 0) fails(m, n, proof.slice(0, -1), root(m), root(n));
      fails(m, n, [...proof, root(m)], root(m), root(n));
    });
    expect(accepted).toEqual([]);
    expect(rejected).toBeGreaterThan(consistencyCases.length * 3);
    // The edges the RFC leaves to the caller: from = to, from = 0, from > to.
    expect(verifyConsistency(5, 5, [], root(5), root(5))).toBe(true);
    expect(verifyConsistency(5, 5, [], root(5), root(6))).toBe(false);
    expect(verifyConsistency(0, 9, [], emptyRoot(), root(9))).toBe(true);
    expect(verifyConsistency(0, 9, [], root(1), root(9))).toBe(false);
    expect(verifyConsistency(9, 5, [], root(9), root(5))).toBe(false);
    expect(consistencyProof(0, 9, read)).toEqual([]);
    expect(() => consistencyProof(9, 5, read)).toThrow(RangeError);
    expect(() => inclusionProof(5, 5, read)).toThrow(RangeError);
  });
});

describe('large trees, leaves generated and never stored', () => {
  /**
   * What a log keeps: only the nodes at level ≥ 8 (the tile levels' worth) while the append
   * streams the leaves; the nodes below are recomputed from their ≤ 256 leaves on demand.
   */
  function largeStore(size: number): { root: Buffer; read: HashReader; stored: number } {
    const t = CompactTree.empty();
    const kept = new Map<string, Buffer>();
    for (let i = 0; i < size; i++) {
      for (const node of t.append(leafHash(`${LARGE_PREFIX}${i}`))) if (node.level >= 8) kept.set(nodeKey(node.level, node.index), node.hash);
    }
    const below = (level: number, index: number): Buffer =>
      level === 0 ? leafHash(`${LARGE_PREFIX}${index}`) : nodeHash(below(level - 1, 2 * index), below(level - 1, 2 * index + 1));
    const readKept = mapReader(kept);
    return { root: t.root(), read: (level, index) => (level >= 8 ? readKept(level, index) : below(level, index)), stored: kept.size };
  }

  it.each(LARGE.map((c, at) => [c.size, at] as const))('size %i: root, inclusion and consistency proofs match the reference', async (size, at) => {
    const store = largeStore(size);
    const ref = answer.large[at];
    const c = LARGE[at];
    expect(store.root.toString('hex')).toBe(ref.root);
    expect(store.stored).toBeLessThan(size / 128);
    expect(rootHash(size, store.read).toString('hex')).toBe(ref.root);
    c.inclusion.forEach((i, k) => {
      const proof = inclusionProof(i, size, store.read);
      expect(hex(proof)).toEqual(ref.inclusion[k]);
      expect(verifyInclusion(i, size, leafHash(`${LARGE_PREFIX}${i}`), proof, store.root)).toBe(true);
      expect(verifyInclusion(i, size, leafHash(`${LARGE_PREFIX}${i + 1}`), proof, store.root)).toBe(false);
    });
    c.consistency.forEach((m, k) => {
      const proof = consistencyProof(m, size, store.read);
      expect(hex(proof)).toEqual(ref.consistency[k].proof);
      expect(rootHash(m, store.read).toString('hex')).toBe(ref.consistency[k].root);
      expect(verifyConsistency(m, size, proof, Buffer.from(ref.consistency[k].root, 'hex'), store.root)).toBe(true);
      expect(verifyConsistency(m, size, proof, store.root, store.root)).toBe(m === size);
    });
  });

  it('a proof reads O(log n) stored nodes, listed before any hashing so that a caller can prefetch them', () => {
    const needed = nodesRead((r) => inclusionProof(999_999, 1_000_003, r));
    expect(needed.length).toBeLessThan(60);
    const consistency = nodesRead((r) => consistencyProof(65_537, 1_000_003, r));
    expect(consistency.length).toBeLessThan(60);
    expect(nodesRead((r) => rootHash(1_000_003, r))).toEqual(CompactTree.edgeNodes(1_000_003));
  });
});
