/**
 * Idempotency keys in SQLite (../idempotency.ts says what a key means): found before a write and
 * again under the write lock, left with the write's result in the write's transaction, and pruned
 * past their retention by the writes that add keys.
 */
import type Database from 'better-sqlite3';
import { IDEMPOTENCY_RETENTION_MS } from '../idempotency.js';
import type { IdempotencyClaim, IdempotencyHit } from '../rows.js';
import type { Db } from './database.js';

/** Expired keys are deleted at most this often, by the write that comes next. */
const PRUNE_EVERY_MS = 60_000;

/** Most expired keys one prune deletes, so that no write pays for a long backlog at once. */
const PRUNE_BATCH = 10_000;

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
