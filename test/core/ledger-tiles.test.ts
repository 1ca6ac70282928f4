/**
 * C2SP tlog-tiles (tile height 8) against test/core/ledger_reference.py: tile index paths, the
 * tiles a tree of a given size has (full and partial), each tile's bytes and each entry bundle,
 * proofs computed from tiles alone, and the strict path and bundle parsers.
 */
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildTile,
  CompactTree,
  decodeEntryBundle,
  encodeEntryBundle,
  entryBundlesForSize,
  formatTileIndex,
  inclusionProof,
  consistencyProof,
  leafHash,
  LedgerFormatError,
  mapReader,
  nodeKey,
  parseTilePath,
  rootHash,
  subtreeHash,
  tileLeafRange,
  tilePath,
  tileReader,
  tilesForSize,
  type Tile,
} from '../../src/core/ledger/index.js';
import { runReference } from './ledger-python.js';

const PREFIX = 'tile-leaf-';
const INDEXES = [0, 1, 7, 999, 1000, 1001, 65_535, 1_000_000, 1_234_067, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER];
const SIZES = [1, 2, 255, 256, 257, 511, 512, 600, 65_535, 65_536, 65_537, 70_000];
const BUNDLES = [[], [''], ['00', 'ff'.repeat(300)], Array.from({ length: 256 }, (_, i) => Buffer.from(`entry ${i}`).toString('hex'))];

interface TilesAnswer {
  tiles: { index_paths: string[]; sizes: { path: string; sha256: string; length: number }[][]; bundles: string[] };
}

const reference = runReference<TilesAnswer>({ tiles: { leaf_prefix: PREFIX, indexes: INDEXES, sizes: SIZES, bundles: BUNDLES } });

const largest = Math.max(...SIZES);
const nodes = new Map<string, Buffer>();
const tree = CompactTree.empty();
for (let i = 0; i < largest; i++) for (const node of tree.append(leafHash(`${PREFIX}${i}`))) nodes.set(nodeKey(node.level, node.index), node.hash);
const read = mapReader(nodes);
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The product's listing in the reference's shape: each hash tile, and after each level-0 tile its entry bundle. */
function listing(size: number): { path: string; sha256: string; length: number }[] {
  const out = [];
  for (const tile of tilesForSize(size)) {
    const bytes = buildTile(tile, read);
    out.push({ path: tilePath(tile), sha256: sha(bytes), length: bytes.length });
    if (tile.level === 0) {
      const bundle: Tile = { level: 'entries', index: tile.index, width: tile.width };
      const { start, end } = tileLeafRange(bundle);
      const entries = Array.from({ length: end - start }, (_, i) => `${PREFIX}${start + i}`);
      const encoded = encodeEntryBundle(entries);
      out.push({ path: tilePath(bundle), sha256: sha(encoded), length: encoded.length });
    }
  }
  return out;
}

let answer: TilesAnswer['tiles'];
beforeAll(async () => {
  answer = (await reference).tiles;
}, 30_000);

describe('tile paths', () => {
  it('write <N> in zero-padded 3-digit groups, all but the last prefixed with x, like the reference', () => {
    expect(INDEXES.map(formatTileIndex)).toEqual(answer.index_paths);
    expect(formatTileIndex(1_234_067)).toBe('x001/x234/067');
    expect(tilePath({ level: 2, index: 1_234_067, width: 17 })).toBe('tile/2/x001/x234/067.p/17');
    expect(tilePath({ level: 'entries', index: 5, width: 256 })).toBe('tile/entries/005');
  });

  it('parse back every path written, and nothing but the canonical spelling', () => {
    for (const index of INDEXES) {
      for (const tile of [
        { level: 0, index, width: 256 },
        { level: 63, index, width: 1 },
        { level: 'entries' as const, index, width: 255 },
      ]) {
        expect(parseTilePath(tilePath(tile))).toEqual(tile);
      }
    }
    const bad = [
      'tile/0/1',
      'tile/00/000',
      'tile/0/x000/001',
      'tile/0/000/001',
      'tile/0/x001',
      'tile/0/001.p/256',
      'tile/0/001.p/0',
      'tile/0/001.p/07',
      'tile/0/001.p/',
      'tile/0/001.p',
      'tile/64/000',
      'tile/-1/000',
      'tiles/0/000',
      'tile/entries/x1/000',
      'tile/0/X001/000',
      'tile/0/',
      'tile/0',
      'tile/0/000/',
      'tile/entry/000',
      'tile/0/009007199254740992'.replace(/(\d{3})(?=\d)/g, 'x$1/'),
    ];
    for (const path of bad) expect(() => parseTilePath(path), path).toThrow(LedgerFormatError);
  });
});

describe('tiles of a tree', () => {
  it('the specification example: size 70,000 has 273 full and one 112-wide level-0 tile, one full and one 17-wide level-1 tile, one 1-wide level-2 tile', () => {
    const tiles = [...tilesForSize(70_000)];
    const at = (level: number) => tiles.filter((t) => t.level === level);
    expect(at(0).length).toBe(274);
    expect(at(0).filter((t) => t.width === 256).length).toBe(273);
    expect(at(0)[273]).toEqual({ level: 0, index: 273, width: 112 });
    expect(at(1)).toEqual([
      { level: 1, index: 0, width: 256 },
      { level: 1, index: 1, width: 17 },
    ]);
    expect(at(2)).toEqual([{ level: 2, index: 0, width: 1 }]);
    expect([...tilesForSize(256)]).toEqual([
      { level: 0, index: 0, width: 256 },
      { level: 1, index: 0, width: 1 },
    ]);
    expect([...tilesForSize(0)]).toEqual([]);
    expect([...entryBundlesForSize(257)]).toEqual([
      { level: 'entries', index: 0, width: 256 },
      { level: 'entries', index: 1, width: 1 },
    ]);
  });

  it.each(SIZES.map((s, i) => [s, i] as const))('size %i: the same tiles and entry bundles, byte for byte, as the reference', (size, i) => {
    expect(listing(size)).toEqual(answer.sizes[i]);
  });

  it('proofs and roots computed from tiles alone equal those from stored nodes', () => {
    for (const size of [257, 65_537, 70_000]) {
      const widths = new Map([...tilesForSize(size)].map((t) => [`${t.level}/${t.index}`, t.width]));
      let fetched = 0;
      const fromTiles = tileReader((level, index) => {
        fetched++;
        const width = widths.get(`${level}/${index}`);
        if (width === undefined) throw new Error(`tile ${level}/${index} does not exist at size ${size}`);
        return buildTile({ level, index, width }, read);
      });
      expect(rootHash(size, fromTiles)).toEqual(rootHash(size, read));
      for (const index of [0, 1, 255, 256, size - 2, size - 1]) expect(inclusionProof(index, size, fromTiles)).toEqual(inclusionProof(index, size, read));
      for (const from of [1, 200, 256, 4097, size - 1].filter((m) => m <= size))
        expect(consistencyProof(from, size, fromTiles)).toEqual(consistencyProof(from, size, read));
      expect(fetched).toBeLessThanOrEqual(widths.size);
    }
  });

  it('a full tile hashes to the entry its parent tile holds for it', () => {
    const parent = buildTile({ level: 1, index: 0, width: 256 }, read);
    for (const index of [0, 1, 100, 255]) {
      const child = buildTile({ level: 0, index, width: 256 }, read);
      expect(subtreeHash(child)).toEqual(parent.subarray(index * 32, (index + 1) * 32));
    }
    expect(() => subtreeHash(Buffer.alloc(96))).toThrow(RangeError);
  });
});

describe('entry bundles', () => {
  it('encode each entry as a big-endian uint16 length and its bytes, like the reference, and decode back', () => {
    BUNDLES.forEach((entries, i) => {
      const raw = entries.map((e) => Buffer.from(e, 'hex'));
      const encoded = encodeEntryBundle(raw);
      expect(encoded.toString('hex')).toBe(answer.bundles[i]);
      expect(decodeEntryBundle(encoded, raw.length)).toEqual(raw);
    });
    expect(encodeEntryBundle([Buffer.alloc(0xffff)]).length).toBe(0xffff + 2);
    expect(() => encodeEntryBundle([Buffer.alloc(0x10000)])).toThrow(RangeError);
    expect(() => encodeEntryBundle(Array.from({ length: 257 }, () => 'x'))).toThrow(RangeError);
  });

  it('refuse a truncated length, a truncated entry, more than 256 entries, or a width other than the one expected', () => {
    const good = encodeEntryBundle(['abc', 'de']);
    expect(() => decodeEntryBundle(good.subarray(0, good.length - 1))).toThrow(/inside an entry/);
    expect(() => decodeEntryBundle(Buffer.concat([good, Buffer.from([0])]))).toThrow(/inside a length/);
    expect(() => decodeEntryBundle(good, 3)).toThrow(/not 3/);
    expect(() => decodeEntryBundle(Buffer.concat([encodeEntryBundle(Array.from({ length: 256 }, () => '')), Buffer.from([0, 0])]))).toThrow(/more than 256/);
  });
});
