/**
 * Group commit: every write of the service goes through one writer that gathers queued writes
 * and commits them in ONE transaction on a `setImmediate`. A request is acknowledged only when
 * its write has committed (its promise resolves after COMMIT), so with `synchronous=FULL` an
 * acknowledged record survives a crash, while a burst of concurrent requests costs one fsync
 * instead of one each.
 *
 * How long a group gathers: under concurrent load the next requests reach the service over a few
 * turns of the event loop, not all in the turn right after a commit, so committing on the next
 * turn made groups of about half the clients and twice the commits. The writer therefore waits
 * until as many writes are queued as in the largest of its last few groups, or at most
 * {@link MAX_WAIT_MS}, whichever comes first (the first write, and every write at low
 * concurrency, commits on the next turn as before). Meanwhile the event loop serves other
 * requests; nothing is acknowledged before its COMMIT.
 *
 * A write that throws is rolled back and rejected alone; the others in the group still commit.
 * Writes almost never throw, so a group first runs without savepoints (a savepoint per write
 * copies every page it touches into the statement journal, a large share of a commit's cost);
 * only when a write throws is that attempt rolled back and the group run again with one
 * savepoint per write. A write's `work` may therefore run twice (its first run rolled back):
 * it must do nothing but SQL.
 *
 * A group stops taking writes once its writes have run for {@link MAX_GROUP_MS}: the writes left
 * over are committed in the next group, a turn of the event loop later, so that a few large
 * batches never hold the event loop (and every other client's request) for long.
 *
 * The database file is checked after every commit, before any of its writes is acknowledged
 * (database.ts, checkDatabaseFile): when it was deleted or replaced, the group is refused, since a
 * commit to a file nobody will open again is not durable. Once after is enough: a file replaced
 * before the commit is still replaced after it, and one stat(2) per group is the whole cost.
 */
import { performance } from 'node:perf_hooks';
import { checkDatabaseFile, type Db } from './database.js';

interface QueuedWrite {
  readonly work: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Work done once per transaction around the writes of a group: `begin` before the first write
 * of every attempt, `end` after the last one, inside the transaction (before COMMIT). Lets writes
 * merge what they have in common (e.g. control coverage: one upsert per control per group rather
 * than one per record). A write must add to what `end` writes only as its last step, once its
 * own statements have succeeded; if `end` throws, the whole group fails like a failed COMMIT.
 */
export interface GroupHooks {
  begin(): void;
  end(): void;
}

/** Writes in one transaction at most; a longer queue is committed in several. */
const MAX_GROUP = 2000;

/** A group takes no more writes once its writes have run this long (ms); the rest go in the next group. */
export const MAX_GROUP_MS = 20;

/** Longest a queued write waits for others to join its group. */
export const MAX_WAIT_MS = 1;

/** Groups remembered for the size the next one waits for. */
const RECENT_GROUPS = 4;

/**
 * Schedules the wait for a group to fill (`later` returns a function that cancels it); tests pass
 * a manual one so that they decide when the wait ends instead of sleeping on the wall clock.
 */
export interface GroupTimer {
  later(fn: () => void, ms: number): () => void;
}

/** The event loop's timers. */
const SYSTEM_TIMER: GroupTimer = {
  later(fn, ms) {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

export class GroupCommitWriter {
  #queue: QueuedWrite[] = [];
  /** a flush is armed on setImmediate */
  #immediate = false;
  /** cancels the longest wait of the current queue before its flush is armed */
  #timer: (() => void) | null = null;
  #closed = false;
  #idle: (() => void)[] = [];
  /** sizes of the last few groups */
  #recent: number[] = [];

  constructor(
    private readonly db: Db,
    private readonly hooks?: GroupHooks,
    private readonly timer: GroupTimer = SYSTEM_TIMER,
    /** the clock a group's time is measured on, in ms (tests pass one they move by hand) */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Queues `work` (synchronous SQLite statements) for the next group commit.
   * @returns what `work` returned, once the transaction holding it has committed
   * @throws whatever `work` threw (its savepoint is rolled back), or the commit's error
   */
  write<T>(work: () => T): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('the store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.#arm();
    });
  }

  /** How many queued writes make a group worth committing at once. */
  #target(): number {
    let target = 1;
    for (const size of this.#recent) if (size > target) target = size;
    return target;
  }

  #arm(): void {
    if (this.#immediate) return;
    if (this.#closed || this.#queue.length >= this.#target()) {
      this.#armNow();
      return;
    }
    this.#timer ??= this.timer.later(() => {
      this.#timer = null;
      this.#armNow();
    }, MAX_WAIT_MS);
  }

  #armNow(): void {
    if (this.#timer !== null) {
      this.#timer();
      this.#timer = null;
    }
    if (this.#immediate) return;
    this.#immediate = true;
    setImmediate(() => this.#flush());
  }

  /** Number of writes waiting for the next commit. */
  get pending(): number {
    return this.#queue.length;
  }

  #flush(): void {
    this.#immediate = false;
    let group = this.#queue.splice(0, MAX_GROUP);
    let outcomes: { ok: boolean; value: unknown }[];
    try {
      const optimistic = this.#commitOptimistically(group);
      if (optimistic !== null && optimistic.length < group.length) {
        // the group ran out of time: the writes not run go first in the next group
        this.#queue.unshift(...group.slice(optimistic.length));
        group = group.slice(0, optimistic.length);
      }
      outcomes = optimistic ?? this.#commitWithSavepoints(group);
      checkDatabaseFile(this.db);
    } catch (error) {
      // The commit itself failed (disk full, I/O error): nothing in the group is stored.
      for (const item of group) item.reject(error);
      this.#noteGroup(group.length);
      this.#afterFlush();
      return;
    }
    this.#noteGroup(group.length);
    group.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.value);
    });
    this.#afterFlush();
  }

  #noteGroup(size: number): void {
    this.#recent.push(size);
    if (this.#recent.length > RECENT_GROUPS) this.#recent.shift();
  }

  /**
   * The group in one transaction without savepoints; null (rolled back) when a write throws.
   * Runs the writes in order until {@link MAX_GROUP_MS} has passed (at least one): the outcomes
   * returned are those of the first writes of the group, the ones committed.
   */
  #commitOptimistically(group: readonly QueuedWrite[]): { ok: boolean; value: unknown }[] | null {
    const values: unknown[] = [];
    let wrote = false;
    try {
      this.db.transaction(() => {
        this.hooks?.begin();
        const deadline = this.now() + MAX_GROUP_MS;
        for (const item of group) {
          values.push(item.work());
          if (values.length < group.length && this.now() > deadline) break;
        }
        wrote = true;
        this.hooks?.end();
      })();
    } catch (error) {
      if (!wrote) return null; // a write threw: the transaction was rolled back
      throw error; // the group's end or COMMIT failed
    }
    return values.map((value) => ({ ok: true, value }));
  }

  /** The group in one transaction, each write in its own savepoint. */
  #commitWithSavepoints(group: readonly QueuedWrite[]): { ok: boolean; value: unknown }[] {
    const outcomes: { ok: boolean; value: unknown }[] = [];
    this.db.transaction(() => {
      this.hooks?.begin();
      for (const item of group) {
        try {
          // A nested better-sqlite3 transaction is a SAVEPOINT.
          outcomes.push({ ok: true, value: this.db.transaction(item.work)() });
        } catch (error) {
          outcomes.push({ ok: false, value: error });
        }
      }
      this.hooks?.end();
    })();
    return outcomes;
  }

  #afterFlush(): void {
    if (this.#queue.length > 0) {
      // only more than MAX_GROUP writes were queued: commit the rest at once
      this.#armNow();
      return;
    }
    if (this.#timer !== null) return;
    for (const notify of this.#idle.splice(0)) notify();
  }

  /** Commits what is queued (at once, without waiting for a group to fill), then refuses new writes. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#queue.length === 0 && !this.#immediate && this.#timer === null) return;
    if (this.#queue.length > 0) this.#armNow();
    await new Promise<void>((resolve) => this.#idle.push(resolve));
  }
}
