/**
 * Identifiers the service hands out: `<prefix>_<uuid>` with a UUIDv7 (RFC 9562), so that ids
 * sort by creation time and the evidence list's tie-break on record_id follows arrival order
 * (record and attestation ids come from the store's own IdGenerator),
 * and API keys (`gk_` + 32 random bytes, base64url).
 */
import { randomBytes } from 'node:crypto';

/** The id a dry run answers with (spec §2.3: "the all-zero nil UUID in dry-run"). */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

export type IdPrefix = 'usr' | 'ws' | 'org' | 'rec' | 'att' | 'sys' | 'key' | 'gpc';

/**
 * Random bytes are drawn from a pool refilled 4 KiB at a time: one `randomBytes` call per id
 * costs a synchronous trip into the crypto library each time, several per request. The bytes are
 * the same CSPRNG output; each is handed out once.
 */
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/** `size` (at most 4096) fresh random bytes, from the pool; the caller may modify them. */
export function randomPoolBytes(size: number): Buffer {
  if (poolOffset + size > pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + size);
  poolOffset += size;
  return bytes;
}

/** A request id: `req_` and 16 random hex digits. */
export function newRequestId(): string {
  return `req_${randomPoolBytes(8).toString('hex')}`;
}

const UUIDV7 = /^(?:[a-z]+_)?([0-9a-f]{8})-([0-9a-f]{4})-7([0-9a-f]{3})-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * Hands out UUIDv7s (48-bit Unix milliseconds, then a 12-bit counter that increases within one
 * millisecond, then 62 random bits) that sort after every id it handed out before, and after the
 * id it was started after. A store owns the generator of its record and attestation ids and
 * starts it after the last id it holds (Store.newId): the evidence list orders records that
 * occurred at the same time by record_id and finds them in storage order, so the two stay the same
 * across restarts, even if the clock has gone back since.
 */
export class IdGenerator {
  #lastMs = -1;
  #sequence = 0;

  /** @param after ids (UUIDv7s, or identifiers ending in one) every new id sorts after; anything else is ignored */
  constructor(after: readonly (string | undefined)[] = []) {
    for (const id of after) {
      const match = id === undefined ? null : UUIDV7.exec(id);
      if (!match) continue;
      const ms = parseInt(match[1] + match[2], 16);
      const counter = parseInt(match[3], 16);
      if (ms > this.#lastMs || (ms === this.#lastMs && counter > this.#sequence)) {
        this.#lastMs = ms;
        this.#sequence = counter;
      }
    }
  }

  /** A new UUIDv7, after every earlier one of this generator. */
  uuidv7(nowMs: number = Date.now()): string {
    if (nowMs > this.#lastMs) {
      this.#lastMs = nowMs;
      this.#sequence = randomPoolBytes(2).readUInt16BE(0) & 0x7ff; // start in the lower half so the counter rarely overflows
    } else {
      this.#sequence++;
      if (this.#sequence > 0xfff) {
        // 4096 ids in one millisecond: borrow the next millisecond rather than repeat an order.
        this.#lastMs++;
        this.#sequence = 0;
      }
    }
    const bytes = randomPoolBytes(16);
    const ms = this.#lastMs;
    const sequence = this.#sequence;
    bytes[0] = Math.floor(ms / 2 ** 40) & 0xff;
    bytes[1] = Math.floor(ms / 2 ** 32) & 0xff;
    bytes[2] = (ms >>> 24) & 0xff;
    bytes[3] = (ms >>> 16) & 0xff;
    bytes[4] = (ms >>> 8) & 0xff;
    bytes[5] = ms & 0xff;
    bytes[6] = 0x70 | (sequence >>> 8);
    bytes[7] = sequence & 0xff;
    bytes[8] = 0x80 | (bytes[8] & 0x3f);
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  /** A new identifier such as `rec_0193a5c2-7b1e-7c00-9f3a-1d2e3f405162`. */
  newId(prefix: IdPrefix): string {
    return `${prefix}_${this.uuidv7()}`;
  }
}

/** The generator of ids whose order across restarts matters to nothing (organisations, keys, systems…). */
const unordered = new IdGenerator();

/** A UUIDv7, monotonic within this process's {@link IdGenerator} for unordered ids. */
export function uuidv7(nowMs: number = Date.now()): string {
  return unordered.uuidv7(nowMs);
}

/** A new identifier such as `key_0193a5c2-7b1e-7c00-9f3a-1d2e3f405162`; record and attestation ids come from the store (Store.newId). */
export function newId(prefix: IdPrefix): string {
  return unordered.newId(prefix);
}

/** The visible start of every API key; lets secret scanners and people recognise one. */
export const API_KEY_PREFIX = 'gk_';

/** A new API key: `gk_` + 32 random bytes in base64url (256 bits of entropy). */
export function newApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** How much of a key is kept in clear for listing (`gk_` + 8 characters); the rest exists only as a hash. */
export function apiKeyDisplayPrefix(apiKey: string): string {
  return apiKey.slice(0, API_KEY_PREFIX.length + 8);
}
