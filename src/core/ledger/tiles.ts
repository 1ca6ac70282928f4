/**
 * C2SP tlog-tiles with tile height 8: hash tiles `tile/<L>/<N>[.p/<W>]`, entry bundles
 * `tile/entries/<N>[.p/<W>]`, which tiles a tree of a given size has, their bytes, and the
 * entry-bundle encoding (big-endian uint16 length, then the entry).
 *
 * A hash tile at level L holds up to 256 consecutive Merkle tree hashes of tree level 8·L: hash i
 * of tile N is MTH(D[(N·256 + i)·256^L : (N·256 + i + 1)·256^L]), i.e. the stored node
 * (8·L, N·256 + i) of merkle.ts. The levels in between are recomputed from a tile's hashes.
 */
import { LedgerFormatError } from './errors.js';
import { HASH_SIZE, nodeHash, type HashReader } from './merkle.js';

/** Tree levels per tile level (tile height). */
export const TILE_HEIGHT = 8;
/** Hashes (or entries) in a full tile. */
export const TILE_WIDTH = 256;
/** The largest tile level the specification allows. */
export const MAX_TILE_LEVEL = 63;
/** The largest entry an entry bundle can carry (uint16 length). */
export const MAX_ENTRY_BYTES = 0xffff;

/** A hash tile (`level` ≥ 0) or an entry bundle (`level` = 'entries'); `width` 256 is a full tile. */
export interface Tile {
  readonly level: number | 'entries';
  readonly index: number;
  readonly width: number;
}

function checkIndex(index: number): void {
  if (!Number.isSafeInteger(index) || index < 0) throw new RangeError(`tile index must be a non-negative safe integer, not ${index}`);
}

/** `<N>` of a tile path: zero-padded 3-digit groups, all but the last prefixed with `x` (1234067 → `x001/x234/067`). */
export function formatTileIndex(index: number): string {
  checkIndex(index);
  let digits = String(index);
  digits = digits.padStart(Math.ceil(digits.length / 3) * 3, '0');
  const groups: string[] = [];
  for (let i = 0; i < digits.length; i += 3) groups.push(digits.slice(i, i + 3));
  return groups.map((group, i) => (i < groups.length - 1 ? 'x' + group : group)).join('/');
}

/** The path of a tile, relative to the log prefix: `tile/<L>/<N>[.p/<W>]` or `tile/entries/<N>[.p/<W>]`. */
export function tilePath(tile: Tile): string {
  if (tile.level !== 'entries' && (!Number.isInteger(tile.level) || tile.level < 0 || tile.level > MAX_TILE_LEVEL)) {
    throw new RangeError(`tile level must be 0..${MAX_TILE_LEVEL}, not ${tile.level}`);
  }
  if (!Number.isInteger(tile.width) || tile.width < 1 || tile.width > TILE_WIDTH) throw new RangeError(`tile width must be 1..256, not ${tile.width}`);
  const partial = tile.width < TILE_WIDTH ? `.p/${tile.width}` : '';
  return `tile/${tile.level}/${formatTileIndex(tile.index)}${partial}`;
}

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/**
 * Parses a tile path (relative to the log prefix, starting with `tile/`), accepting only the one
 * canonical spelling of each tile: no leading zeros in `<L>` or `<W>`, `<W>` 1..255, `<L>` 0..63,
 * `<N>` in 3-digit groups with exactly the `x` prefixes {@link formatTileIndex} writes.
 * @throws LedgerFormatError
 */
export function parseTilePath(path: string): Tile {
  const bad = (why: string) => new LedgerFormatError(`not a tile path (${why})`);
  const parts = path.split('/');
  if (parts[0] !== 'tile' || parts.length < 3) throw bad('expected tile/<L>/<N>[.p/<W>]');
  const levelText = parts[1];
  let level: number | 'entries';
  if (levelText === 'entries') level = 'entries';
  else {
    if (!DECIMAL.test(levelText) || Number(levelText) > MAX_TILE_LEVEL) throw bad(`level must be 0..${MAX_TILE_LEVEL}`);
    level = Number(levelText);
  }
  let groups = parts.slice(2);
  let width = TILE_WIDTH;
  const last = groups[groups.length - 1];
  if (last.endsWith('.p')) {
    throw bad('partial width missing');
  }
  const beforeLast = groups.length >= 2 ? groups[groups.length - 2] : '';
  if (beforeLast.endsWith('.p')) {
    const widthText = last;
    if (!DECIMAL.test(widthText) || Number(widthText) < 1 || Number(widthText) >= TILE_WIDTH) throw bad('partial width must be 1..255');
    width = Number(widthText);
    groups = [...groups.slice(0, -2), beforeLast.slice(0, -2)];
  }
  if (groups.length === 0) throw bad('index missing');
  for (let i = 0; i < groups.length; i++) {
    const pattern = i < groups.length - 1 ? /^x[0-9]{3}$/ : /^[0-9]{3}$/;
    if (!pattern.test(groups[i])) throw bad('index must be 3-digit groups, all but the last prefixed with x');
  }
  const index = Number(groups.map((group) => group.replace('x', '')).join(''));
  if (!Number.isSafeInteger(index)) throw bad('index too large');
  const tile: Tile = { level, index, width };
  if (tilePath(tile) !== path) throw bad('not the canonical spelling');
  return tile;
}

/**
 * Every tile (hash tiles, levels ascending, then nothing else) of a tree of `size`: the full tiles
 * and, per level, the partial tile of width floor(size / 256^L) mod 256 when that is not 0.
 * Entry bundles are the level-0 hash tiles with level 'entries' ({@link entryBundlesForSize}).
 */
export function* tilesForSize(size: number): Generator<Tile> {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`tree size must be a non-negative safe integer, not ${size}`);
  let hashes = size; // hashes at the current tile level: floor(size / 256^L)
  for (let level = 0; hashes > 0; level++) {
    const full = Math.floor(hashes / TILE_WIDTH);
    for (let index = 0; index < full; index++) yield { level, index, width: TILE_WIDTH };
    const width = hashes % TILE_WIDTH;
    if (width > 0) yield { level, index: full, width };
    hashes = full;
  }
}

/** Every entry bundle of a tree of `size`. */
export function* entryBundlesForSize(size: number): Generator<Tile> {
  for (const tile of tilesForSize(size)) {
    if (tile.level !== 0) return;
    yield { level: 'entries', index: tile.index, width: tile.width };
  }
}

/** The stored nodes a hash tile is made of, in order: (8·L, N·256 + i) for i < width. */
export function tileNodes(tile: Tile): { level: number; index: number }[] {
  if (tile.level === 'entries') throw new RangeError('an entry bundle holds entries, not hashes');
  const nodes = [];
  for (let i = 0; i < tile.width; i++) nodes.push({ level: tile.level * TILE_HEIGHT, index: tile.index * TILE_WIDTH + i });
  return nodes;
}

/** The bytes of a hash tile: its hashes concatenated. */
export function buildTile(tile: Tile, read: HashReader): Buffer {
  return Buffer.concat(tileNodes(tile).map((node) => read(node.level, node.index)));
}

/** The leaf indexes an entry bundle (or a level-0 tile) covers: [start, start + width). */
export function tileLeafRange(tile: Tile): { start: number; end: number } {
  const span = tile.level === 'entries' ? 1 : TILE_WIDTH ** tile.level;
  const start = tile.index * TILE_WIDTH * span;
  return { start, end: start + tile.width * span };
}

/**
 * The hash of any stored node computed from the hash tile that holds its subtree: node
 * (8·L + r, i) is the perfect subtree over hashes [i·2^r, (i+1)·2^r) of tree level 8·L, all in
 * tile floor(i·2^r / 256) of level L. `tileBytes` is that tile (full, or partial and wide enough).
 */
export function nodeFromTile(level: number, index: number, tileBytes: Uint8Array): Buffer {
  const { tile, first, count } = tileForNode(level, index);
  if (tileBytes.length % HASH_SIZE !== 0 || tileBytes.length / HASH_SIZE < first + count) {
    throw new LedgerFormatError(`tile ${tilePath({ ...tile, width: TILE_WIDTH })} is too short for node ${level}/${index}`);
  }
  return subtreeHash(tileBytes.subarray(first * HASH_SIZE, (first + count) * HASH_SIZE));
}

/**
 * The root of the perfect subtree whose bottom row is `hashes` (a power of two of concatenated
 * 32-byte hashes, as in a tile). For a full tile at level L this is the hash its parent tile
 * holds for it at level L + 1, which is how an auditor checks tiles against each other.
 */
export function subtreeHash(hashes: Uint8Array): Buffer {
  const count = hashes.length / HASH_SIZE;
  if (!Number.isInteger(count) || count < 1 || (count & (count - 1)) !== 0) throw new RangeError('a perfect subtree has a power of two of 32-byte hashes');
  let row: Buffer[] = [];
  for (let i = 0; i < count; i++) row.push(Buffer.from(hashes.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE)));
  while (row.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < row.length; i += 2) next.push(nodeHash(row[i], row[i + 1]));
    row = next;
  }
  return row[0];
}

/** Which hash tile holds the subtree of node (level, index), and which of its hashes: [first, first + count). */
export function tileForNode(level: number, index: number): { tile: { level: number; index: number }; first: number; count: number } {
  if (!Number.isInteger(level) || level < 0 || !Number.isSafeInteger(index) || index < 0) throw new RangeError(`no node ${level}/${index}`);
  const tileLevel = Math.floor(level / TILE_HEIGHT);
  const count = 2 ** (level - tileLevel * TILE_HEIGHT);
  const position = index * count; // index of the first covered hash at tree level 8·L
  return { tile: { level: tileLevel, index: Math.floor(position / TILE_WIDTH) }, first: position % TILE_WIDTH, count };
}

/** Tiles a {@link tileReader} keeps: a proof touches at most two per tile level, so this holds every proof's tiles and bounds memory. */
const TILE_CACHE_SIZE = 64;

/**
 * A {@link HashReader} over hash tiles, e.g. fetched from a log: `getTile` returns the bytes of the
 * tile at (level, index) (full, or the partial tile the checkpoint implies). The most recently
 * used tiles are cached.
 */
export function tileReader(getTile: (level: number, index: number) => Uint8Array): HashReader {
  const cache = new Map<string, Uint8Array>();
  return (level, index) => {
    const { tile } = tileForNode(level, index);
    const key = `${tile.level}/${tile.index}`;
    let bytes = cache.get(key);
    if (bytes) cache.delete(key);
    else bytes = getTile(tile.level, tile.index);
    cache.set(key, bytes);
    if (cache.size > TILE_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    return nodeFromTile(level, index, bytes);
  };
}

/** An entry bundle: each entry as a big-endian uint16 length followed by its bytes. */
export function encodeEntryBundle(entries: readonly (Uint8Array | string)[]): Buffer {
  if (entries.length > TILE_WIDTH) throw new RangeError(`an entry bundle holds at most ${TILE_WIDTH} entries`);
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const bytes = typeof entry === 'string' ? Buffer.from(entry, 'utf8') : Buffer.from(entry);
    if (bytes.length > MAX_ENTRY_BYTES) throw new RangeError(`an entry of ${bytes.length} bytes does not fit a uint16 length`);
    const length = Buffer.alloc(2);
    length.writeUInt16BE(bytes.length);
    parts.push(length, bytes);
  }
  return Buffer.concat(parts);
}

/**
 * The entries of an entry bundle, strictly: every length complete, nothing after the last entry,
 * and, when `width` is given, exactly that many entries.
 * @throws LedgerFormatError
 */
export function decodeEntryBundle(bundle: Uint8Array, width?: number): Buffer[] {
  const bytes = Buffer.from(bundle.buffer, bundle.byteOffset, bundle.byteLength);
  const entries: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + 2 > bytes.length) throw new LedgerFormatError('entry bundle ends inside a length');
    const length = bytes.readUInt16BE(at);
    at += 2;
    if (at + length > bytes.length) throw new LedgerFormatError('entry bundle ends inside an entry');
    entries.push(Buffer.from(bytes.subarray(at, at + length)));
    at += length;
    if (entries.length > TILE_WIDTH) throw new LedgerFormatError(`entry bundle holds more than ${TILE_WIDTH} entries`);
  }
  if (width !== undefined && entries.length !== width) throw new LedgerFormatError(`entry bundle holds ${entries.length} entries, not ${width}`);
  return entries;
}
