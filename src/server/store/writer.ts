/**
 * Group commit: every write of the service goes through one writer that gathers the writes
 * queued during one turn of the event loop and commits them in ONE transaction on the next
 * `setImmediate`. A request is acknowledged only when its write has committed (its promise
 * resolves after COMMIT), so with `synchronous=FULL` an acknowledged record survives a crash,
 * while a burst of concurrent requests costs one fsync instead of one each.
 *
 * Each write runs inside its own savepoint: one that throws is rolled back and rejected alone,
 * the others in the group still commit.
 */
import type { Db } from './database.js';

interface QueuedWrite {
  readonly work: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** Writes in one transaction at most; a longer queue is committed in several. */
const MAX_GROUP = 2000;

export class GroupCommitWriter {
  #queue: QueuedWrite[] = [];
  #scheduled = false;
  #closed = false;
  #idle: (() => void)[] = [];

  constructor(private readonly db: Db) {}

  /**
   * Queues `work` (synchronous SQLite statements) for the next group commit.
   * @returns what `work` returned, once the transaction holding it has committed
   * @throws whatever `work` threw (its savepoint is rolled back), or the commit's error
   */
  write<T>(work: () => T): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('the store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  /** Number of writes waiting for the next commit. */
  get pending(): number {
    return this.#queue.length;
  }

  #flush(): void {
    const group = this.#queue.splice(0, MAX_GROUP);
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      this.db.transaction(() => {
        for (const item of group) {
          try {
            // A nested better-sqlite3 transaction is a SAVEPOINT.
            outcomes.push({ ok: true, value: this.db.transaction(item.work)() });
          } catch (error) {
            outcomes.push({ ok: false, value: error });
          }
        }
      })();
    } catch (error) {
      // The commit itself failed (disk full, I/O error): nothing in the group is stored.
      for (const item of group) item.reject(error);
      this.#afterFlush();
      return;
    }
    group.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.value);
    });
    this.#afterFlush();
  }

  #afterFlush(): void {
    if (this.#queue.length > 0) {
      setImmediate(() => this.#flush());
      return;
    }
    this.#scheduled = false;
    for (const notify of this.#idle.splice(0)) notify();
  }

  /** Commits what is queued, then refuses new writes. */
  async close(): Promise<void> {
    this.#closed = true;
    if (!this.#scheduled) return;
    await new Promise<void>((resolve) => this.#idle.push(resolve));
  }
}
