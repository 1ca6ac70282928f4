/**
 * Idempotency keys on the write endpoints (docs/service.md "Idempotency"): the `Idempotency-Key`
 * header of a single write, the `idempotency_key` member of a batch item. The member is taken off
 * the item before anything else sees it: what is validated, signed, stored and hashed is the item
 * without it. store/idempotency.ts keeps the keys.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { canonicalize, isPlainObject, type JsonValue } from '../../core/index.js';
import { invalidField } from '../errors.js';
import { contentHash, idempotencyKeyProblem, type IdempotencyClaim, type IdempotencyHit } from '../store/idempotency.js';

/** The request header of a single write's key. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** The reply header of a replayed write. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** A batch item's key member. */
export const ITEM_KEY_MEMBER = 'idempotency_key';

/** The `Idempotency-Key` header, or undefined when absent. @throws HttpError 422 naming the header when malformed */
export function headerKey(request: FastifyRequest): string | undefined {
  const value = request.headers['idempotency-key'];
  if (value === undefined) return undefined;
  // Node joins a repeated header into one value (`a, b`): count the raw headers instead.
  const given = request.raw.rawHeaders.filter((name, index) => index % 2 === 0 && name.toLowerCase() === 'idempotency-key').length;
  if (Array.isArray(value) || given > 1) throw invalidField(IDEMPOTENCY_HEADER, 'must be given once');
  const problem = idempotencyKeyProblem(value);
  if (problem !== null) throw invalidField(IDEMPOTENCY_HEADER, problem);
  return value;
}

/**
 * A batch item without its `idempotency_key` member, and the key.
 * @throws HttpError 422 on `<prefix>.idempotency_key` when the member is not a usable key
 */
export function splitItemKey(item: JsonValue, prefix: string): { item: JsonValue; key?: string } {
  if (!isPlainObject(item) || !(ITEM_KEY_MEMBER in item)) return { item };
  const { [ITEM_KEY_MEMBER]: key, ...rest } = item;
  const problem = idempotencyKeyProblem(key);
  if (problem !== null) throw invalidField(`${prefix}.${ITEM_KEY_MEMBER}`, problem);
  return { item: rest, key: key as string };
}

/**
 * The claim of a key on `content` (the record as sent, without its key), or undefined when no key
 * or no canonical form (such content fails validation, which answers it).
 */
export function claimOf(kind: 'evidence' | 'attestation', key: string | undefined, content: JsonValue): IdempotencyClaim | undefined {
  if (key === undefined) return undefined;
  let text: string;
  try {
    text = canonicalize(content);
  } catch {
    return undefined;
  }
  return { key, hash: contentHash(kind, text) };
}

/**
 * The claim of a key on an evidence record, and the payload's canonical text it was computed from
 * (which the record's row stores: computed once). The content hash covers the record without its
 * payload and the payload, each canonical, so it names the same content as {@link claimOf} would.
 */
export function evidenceClaimOf(key: string | undefined, record: JsonValue): { claim?: IdempotencyClaim; payloadText?: string } {
  if (key === undefined || !isPlainObject(record)) return {};
  const { payload, ...rest } = record;
  try {
    const payloadText = payload === undefined ? 'null' : canonicalize(payload);
    return { claim: { key, hash: contentHash('evidence', `${canonicalize(rest)}\n${payloadText}`) }, ...(payload !== undefined ? { payloadText } : {}) };
  } catch {
    return {};
  }
}

/** The 422 of a key reused with different content. */
export function keyConflict(field: string, key: string) {
  return invalidField(
    field,
    `"${key}" was already used in this workspace with different content; an idempotency key names one write (use a new key for a new write)`,
  );
}

/** Marks a reply as the replay of an earlier write. */
export function markReplayed(reply: FastifyReply): void {
  void reply.header(REPLAYED_HEADER, 'true');
}

/**
 * The answer to a write whose key was already used: the first write's result, marked as a replay
 * (status 201 as the first got), or 422 naming the key when the content differs.
 */
export function replayOrConflict(hit: IdempotencyHit, field: string, key: string, reply: FastifyReply): Record<string, unknown> {
  if (hit.kind === 'conflict') throw keyConflict(field, key);
  markReplayed(reply);
  void reply.code(201);
  return { ...hit.result, detail: 'ok', replayed: true };
}
