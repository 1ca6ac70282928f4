/**
 * Idempotency keys the client derives (docs/service.md "Idempotency"): the hex SHA-256 of the
 * record's canonical JSON as sent, prefixed. The same record always gets the same key, so a
 * re-run import, a retried CI step or a retry after a timeout is answered with the first result
 * instead of storing the record again; a different record gets a different key.
 */
import { createHash } from 'node:crypto';
import { canonicalize } from '../core/canonical-json.js';

/** What a derived key starts with (a key chosen by the caller may be anything the service accepts). */
export const DERIVED_KEY_PREFIX = 'govctl-sha256-';

/** The member of a batch item that carries its key (the service takes it off before storing). */
export const ITEM_KEY_MEMBER = 'idempotency_key';

/**
 * The key derived from a record's content (its `idempotency_key` member, if any, left out).
 * @example idempotencyKeyFor({ record_type: 'change_event', … }) // 'govctl-sha256-3f1c…'
 * @throws CanonicalJsonError when the record cannot be written as canonical JSON
 */
export function idempotencyKeyFor(record: object): string {
  return keyAndLength(record).key;
}

/**
 * The derived key and the length of the canonical JSON it was computed from (about the record's
 * length on the wire: bulk senders budget request bodies with it instead of writing the JSON twice).
 */
export function keyAndLength(record: object): { key: string; length: number } {
  const { [ITEM_KEY_MEMBER]: _ignored, ...content } = record as Record<string, unknown>;
  const text = canonicalize(content);
  return { key: DERIVED_KEY_PREFIX + createHash('sha256').update(text).digest('hex'), length: text.length };
}

/** The record with its derived key as the batch item member (a key it already carries is kept). */
export function withIdempotencyKey<T extends object>(record: T): T & { idempotency_key: string } {
  const given = (record as Record<string, unknown>)[ITEM_KEY_MEMBER];
  return { ...record, [ITEM_KEY_MEMBER]: typeof given === 'string' ? given : idempotencyKeyFor(record) };
}
