/**
 * Group commit on PostgreSQL: the writes that arrive while a group's transaction is in flight are
 * queued and committed together in the next one, on one connection, so a burst of requests costs
 * one COMMIT (one WAL flush: `synchronous_commit` stays on) instead of one each. A write's promise
 * resolves once the COMMIT holding it has returned, i.e. once PostgreSQL has made it durable.
 *
 * A group is one transaction:
 *  1. the `ledger_heads` rows of every workspace the group writes are locked, in ws_key order (so
 *     two replicas' groups never deadlock): a workspace's writes are serialised across replicas
 *     from here to COMMIT, which makes its leaf indexes and its stored order (seq) follow commit
 *     order, and makes an idempotency key read here authoritative;
 *  2. each write's `work` runs: it reads what it must and adds rows to the group (records, log
 *     leaves, keys, systems and coverage events) rather than sending one statement per row;
 *  3. the rows are written with one multi-row statement per table, the heads advanced, COMMIT.
 *
 * A write that throws must not take its group down: the group first runs without savepoints (a
 * savepoint is a round trip, and writes almost never throw); when anything fails it is rolled back
 * and run again with each write in its own savepoint, its rows flushed inside it, so that only the
 * failing write is rejected. A write's `work` may therefore run twice: it must keep its effects in
 * the group it is given.
 */
import type pg from 'pg';
import { storeError } from './pool.js';

/** A stored log leaf, written with its record. */
export interface PendingLeaf {
  wsKey: number;
  index: number;
  kind: string;
  id: string;
  entry: Buffer;
}

/** What a group flushes to one table: rows as columns (one array per column, for unnest). */
export interface GroupTable {
  /** the INSERT … SELECT FROM unnest($1::type[], …) statement */
  readonly sql: string;
  /** one array per column */
  readonly columns: unknown[][];
}

/**
 * The transaction of one group: its connection, the heads it holds, and the rows its writes have
 * added so far. `tables` are flushed in insertion order of their first use.
 */
export class Group {
  /** ws_key → next leaf index, for the workspaces this group holds */
  readonly heads = new Map<number, number>();
  readonly tables = new Map<string, unknown[][]>();
  readonly #sql = new Map<string, string>();
  /** events for the derived tables, merged at the group's end (systems, coverage) */
  readonly derived: unknown[] = [];
  /** values a write leaves for the writes after it in the same group (e.g. idempotency keys) */
  readonly memo = new Map<string, unknown>();

  constructor(readonly client: pg.ClientBase) {}

  /** Adds a row to `table` (its columns in the order of `sql`'s unnest). */
  add(table: string, sql: string, row: readonly unknown[]): void {
    let columns = this.tables.get(table);
    if (columns === undefined) {
      columns = row.map(() => []);
      this.tables.set(table, columns);
      this.#sql.set(table, sql);
    }
    row.forEach((value, i) => columns![i]!.push(value));
  }

  /** The next leaf index of a workspace this group holds (taking it). */
  takeIndex(wsKey: number): number {
    const next = this.heads.get(wsKey);
    if (next === undefined) throw new Error(`the group does not hold workspace ${wsKey}'s log head`);
    this.heads.set(wsKey, next + 1);
    return next;
  }

  /** Writes the rows added so far, one statement per table, and forgets them. */
  async flushRows(): Promise<void> {
    for (const [table, columns] of this.tables) {
      if (columns[0]!.length === 0) continue;
      await this.client.query(this.#sql.get(table)!, columns);
    }
    this.tables.clear();
  }

  /** What {@link restore} brings back: the state before a write ran. */
  snapshot(): { heads: Map<number, number>; derived: number; memo: Map<string, unknown> } {
    return { heads: new Map(this.heads), derived: this.derived.length, memo: new Map(this.memo) };
  }

  restore(state: ReturnType<Group['snapshot']>): void {
    this.heads.clear();
    for (const [k, v] of state.heads) this.heads.set(k, v);
    this.derived.length = state.derived;
    this.memo.clear();
    for (const [k, v] of state.memo) this.memo.set(k, v);
    this.tables.clear();
  }
}

export interface GroupHooks {
  /** after the heads are locked: nothing by default */
  begin?(group: Group): Promise<void>;
  /** after every write's rows are flushed, before COMMIT: the derived tables, the heads */
  end(group: Group): Promise<void>;
}

interface QueuedWrite {
  readonly wsKeys: readonly number[];
  readonly work: (group: Group) => Promise<unknown> | unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** Writes in one transaction at most; a longer queue is committed in several. */
const MAX_GROUP = 2000;

export class PgGroupCommitWriter {
  #queue: QueuedWrite[] = [];
  #running: Promise<void> | null = null;
  #closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly hooks: GroupHooks,
  ) {}

  /** Number of writes waiting for the next group. */
  get pending(): number {
    return this.#queue.length;
  }

  /**
   * Queues `work` for the next group; `wsKeys` are the workspaces it writes (their log heads are
   * locked for it).
   * @returns what `work` returned, once the transaction holding it has committed
   */
  write<T>(wsKeys: readonly number[], work: (group: Group) => Promise<T> | T): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('the store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ wsKeys, work, resolve: resolve as (value: unknown) => void, reject });
      // The next turn, not at once: the writes of requests parsed in this turn join the group.
      if (this.#running === null) this.#running = new Promise<void>((done) => setImmediate(() => this.#drain().then(done)));
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const group = this.#queue.splice(0, MAX_GROUP);
      await this.#commit(group);
    }
    this.#running = null;
  }

  async #commit(items: readonly QueuedWrite[]): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      for (const item of items) item.reject(error);
      return;
    }
    let broken: unknown = undefined;
    try {
      let outcomes = await this.#attempt(client, items, false).catch(() => null);
      if (outcomes === null) outcomes = await this.#attempt(client, items, true);
      items.forEach((item, i) => {
        const outcome = outcomes![i]!;
        if (outcome.ok) item.resolve(outcome.value);
        else item.reject(storeError(outcome.value));
      });
    } catch (error) {
      // BEGIN, the heads, the group's end or COMMIT failed (the database went away): nothing in
      // the group is known to be stored; every write is rejected (a client retries with its key).
      broken = error;
      for (const item of items) item.reject(storeError(error));
    } finally {
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  /** One attempt at the group; throws (rolled back) when anything fails and `isolated` is false. */
  async #attempt(client: pg.PoolClient, items: readonly QueuedWrite[], isolated: boolean): Promise<{ ok: boolean; value: unknown }[]> {
    // Acknowledged only once durable, whatever the server's or the role's default; SET LOCAL
    // lasts the transaction, so it holds behind a transaction-mode pooler too.
    await client.query('BEGIN; SET LOCAL synchronous_commit = on');
    try {
      const group = new Group(client);
      await this.#lockHeads(group, items);
      await this.hooks.begin?.(group);
      const outcomes: { ok: boolean; value: unknown }[] = [];
      for (const item of items) {
        if (!isolated) {
          outcomes.push({ ok: true, value: await item.work(group) });
          continue;
        }
        const before = group.snapshot();
        await client.query('SAVEPOINT w');
        try {
          const value = await item.work(group);
          await group.flushRows();
          await client.query('RELEASE SAVEPOINT w');
          outcomes.push({ ok: true, value });
        } catch (error) {
          await client.query('ROLLBACK TO SAVEPOINT w');
          group.restore(before);
          outcomes.push({ ok: false, value: error });
        }
      }
      await group.flushRows();
      await this.hooks.end(group);
      await client.query('COMMIT');
      return outcomes;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  }

  /** Locks the log heads of the group's workspaces, in ws_key order (creating a missing one). */
  async #lockHeads(group: Group, items: readonly QueuedWrite[]): Promise<void> {
    const keys = [...new Set(items.flatMap((item) => item.wsKeys))].sort((a, b) => a - b);
    if (keys.length === 0) return;
    const lock = 'SELECT ws_key, next_index FROM ledger_heads WHERE ws_key = ANY($1::int[]) ORDER BY ws_key FOR UPDATE';
    let { rows } = await group.client.query<{ ws_key: number; next_index: number }>(lock, [keys]);
    if (rows.length < keys.length) {
      await group.client.query('INSERT INTO ledger_heads (ws_key, next_index) SELECT unnest($1::int[]), 0 ON CONFLICT DO NOTHING', [keys]);
      ({ rows } = await group.client.query<{ ws_key: number; next_index: number }>(lock, [keys]));
    }
    for (const row of rows) group.heads.set(row.ws_key, row.next_index);
  }

  /** Commits what is queued, then refuses new writes. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#running !== null) await this.#running;
  }
}
