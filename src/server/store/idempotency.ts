/**
 * Idempotency keys (docs/service.md "Idempotency"; migration 5). A write that carries a key
 * leaves it here in the same transaction as its record, with a hash of the content sent and the
 * result the write got. A repeat of the key with the same content is answered with that result
 * and stores nothing; with other content it is refused. Keys are per workspace and are kept for
 * {@link IDEMPOTENCY_RETENTION_MS}; older ones are pruned by the writes that add keys.
 */
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Db } from './database.js';

/** How long a key is honoured: 24 hours after the write that left it. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** Longest key accepted, in characters (printable ASCII). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;

/** Expired keys are deleted at most this often, by the write that comes next. */
const PRUNE_EVERY_MS = 60_000;

/** Most expired keys one prune deletes, so that no write pays for a long backlog at once. */
const PRUNE_BATCH = 10_000;

const KEY_FORM = /^[\x21-\x7e]+$/;

/** A key and the hash of the content it came with. */
export interface IdempotencyClaim {
  key: string;
  /** see {@link contentHash} */
  hash: string;
}

/** What a key already stands for: the same content (its result), or other content. */
export type IdempotencyHit = { kind: 'replay'; result: Record<string, unknown> } | { kind: 'conflict' };

/** Why a key cannot be used, or null when it can. */
export function idempotencyKeyProblem(key: unknown): string | null {
  if (typeof key !== 'string') return 'must be a string';
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) return `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`;
  if (!KEY_FORM.test(key)) return 'must be printable ASCII without spaces';
  return null;
}

/**
 * The hash a key is compared by: SHA-256 (hex) of the kind of write and the canonical JSON text
 * of the content as sent, without its `idempotency_key` member. The kind keeps an attestation
 * and an evidence record from ever being the same content.
 */
export function contentHash(kind: 'evidence' | 'attestation', canonicalText: string): string {
  return createHash('sha256').update(kind).update('\n').update(canonicalText).digest('hex');
}

export class IdempotencyStore {
  readonly #find: Database.Statement<[string, string, number], { content_hash: string; result: string }>;
  readonly #insert: Database.Statement<[string, string, string, string, number]>;
  readonly #prune: Database.Statement<[number, number]>;
  #lastPruneMs = 0;

  constructor(db: Db) {
    this.#find = db.prepare('SELECT content_hash, result FROM idempotency_keys WHERE workspace_id = ? AND idem_key = ? AND created_ms >= ?');
    // OR REPLACE: an expired key not yet pruned is taken over by the new write.
    this.#insert = db.prepare('INSERT OR REPLACE INTO idempotency_keys (workspace_id, idem_key, content_hash, result, created_ms) VALUES (?, ?, ?, ?, ?)');
    this.#prune = db.prepare(
      `DELETE FROM idempotency_keys WHERE (workspace_id, idem_key) IN
         (SELECT workspace_id, idem_key FROM idempotency_keys WHERE created_ms < ? LIMIT ?)`,
    );
  }

  /** What the key stands for in the workspace, or null when it is unused (or expired). */
  find(workspaceId: string, claim: IdempotencyClaim, nowMs: number): IdempotencyHit | null {
    const row = this.#find.get(workspaceId, claim.key, nowMs - IDEMPOTENCY_RETENTION_MS);
    if (row === undefined) return null;
    if (row.content_hash !== claim.hash) return { kind: 'conflict' };
    return { kind: 'replay', result: JSON.parse(row.result) as Record<string, unknown> };
  }

  /**
   * Leaves the key with the result of its write; call inside the write's transaction. Every
   * {@link PRUNE_EVERY_MS} it also deletes keys past their retention.
   */
  remember(workspaceId: string, claim: IdempotencyClaim, result: Record<string, unknown>, nowMs: number): void {
    this.#insert.run(workspaceId, claim.key, claim.hash, JSON.stringify(result), nowMs);
    if (nowMs - this.#lastPruneMs >= PRUNE_EVERY_MS) {
      this.#lastPruneMs = nowMs;
      this.#prune.run(nowMs - IDEMPOTENCY_RETENTION_MS, PRUNE_BATCH);
    }
  }
}
