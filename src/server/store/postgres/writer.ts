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
 *  3. the rows are written with one multi-row statement per table, the heads advanced and the
 *     derived tables updated — all in ONE statement (data-modifying CTEs), then COMMIT.
 * Three round trips to the database per group (BEGIN with the locks, the rows, COMMIT), whatever
 * its size: on a busy machine each round trip waits for the database process to be scheduled.
 *
 * A write that throws must not take its group down: the group first runs without savepoints (a
 * savepoint is a round trip, and writes almost never throw); when anything fails it is rolled back
 * and run again with each write in its own savepoint, its rows flushed inside it, so that only the
 * failing write is rejected. A write's `work` may therefore run twice: it must keep its effects in
 * the group it is given.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { Batches } from './batches.js';
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
  /** whole statements written with the rows (the group's end: derived tables, heads) */
  readonly #statements: { sql: string; params: unknown[] }[] = [];
  /** events for the derived tables, merged at the group's end (systems, coverage) */
  readonly derived: unknown[] = [];
  /** values a write leaves for the writes after it in the same group (e.g. idempotency keys) */
  readonly memo = new Map<string, unknown>();
  /** work the writes have left for the group's settle hook (one statement for all of them) */
  readonly pending: unknown[] = [];
  /** the idempotency keys the group's writes declared (read together by the begin hook) */
  readonly claimed: { workspaceId: string; key: string }[] = [];

  constructor(readonly client: pg.ClientBase) {}

  /** Adds a row to `table` (its columns in the order of `sql`'s unnest). */
  add(table: string, sql: string, row: readonly unknown[]): void {
    let columns = this.tables.get(table);
    if (columns === undefined) {
      columns = row.map(() => []);
      this.tables.set(table, columns);
      this.#sql.set(table, sql);
    }
    row.forEach((value, i) => columns[i].push(value));
  }

  /** The next leaf index of a workspace this group holds (taking it). */
  takeIndex(wsKey: number): number {
    const next = this.heads.get(wsKey);
    if (next === undefined) throw new Error(`the group does not hold workspace ${wsKey}'s log head`);
    this.heads.set(wsKey, next + 1);
    return next;
  }

  /** Adds a whole statement (no RETURNING) to be written with the rows by {@link flushRows}. */
  addStatement(sql: string, params: unknown[]): void {
    this.#statements.push({ sql, params });
  }

  /**
   * Writes the rows and statements added so far in one statement (each a data-modifying CTE: they
   * run on one snapshot, and touch different rows), and forgets them.
   */
  async flushRows(): Promise<void> {
    const parts: { sql: string; params: unknown[] }[] = [];
    for (const [table, columns] of this.tables) if (columns[0].length > 0) parts.push({ sql: this.#sql.get(table)!, params: columns });
    parts.push(...this.#statements);
    this.tables.clear();
    this.#statements.length = 0;
    if (parts.length === 0) return;
    const params: unknown[] = [];
    const ctes = parts.map((part, i) => {
      const offset = params.length;
      params.push(...part.params);
      return `w${i} AS (${part.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)})`;
    });
    const text = parts.length === 1 ? parts[0].sql : `WITH ${ctes.join(', ')} SELECT 1`;
    // Prepared once per connection and shape (a handful: which tables a group writes), so the
    // statement is not parsed and planned again for every group.
    await this.client.query({ name: statementName(text), text, values: params });
  }

  /** What {@link restore} brings back: the state before a write ran. */
  snapshot(): { heads: Map<number, number>; derived: number; memo: Map<string, unknown>; pending: number } {
    return { heads: new Map(this.heads), derived: this.derived.length, memo: new Map(this.memo), pending: this.pending.length };
  }

  restore(state: ReturnType<Group['snapshot']>): void {
    this.heads.clear();
    for (const [k, v] of state.heads) this.heads.set(k, v);
    this.derived.length = state.derived;
    this.pending.length = state.pending;
    this.memo.clear();
    for (const [k, v] of state.memo) this.memo.set(k, v);
    this.tables.clear();
    this.#statements.length = 0;
  }
}

const statementNames = new Map<string, string>();

/** A prepared statement's name for `text`, the same for the same text. */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `govctl_group_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
    if (statementNames.size < 256) statementNames.set(text, name);
  }
  return name;
}

/**
 * A write's result known only once its group has settled: what a write returns when it left its
 * statement to the group's settle hook (one statement for the whole group, not one per write).
 */
export class Deferred<T> {
  constructor(readonly get: () => T) {}
}

const settled = (value: unknown): unknown => (value instanceof Deferred ? value.get() : value);

export interface GroupHooks {
  /** after the heads are locked: nothing by default */
  begin?(group: Group): Promise<void>;
  /** after the writes have run (in isolation: after each), for what they left in `group.pending` */
  settle?(group: Group): Promise<void>;
  /** after every write has run, before the rows are written: adds the derived tables and the heads */
  end(group: Group): Promise<void>;
}

interface QueuedWrite {
  readonly wsKeys: readonly number[];
  readonly claimed: readonly { workspaceId: string; key: string }[];
  readonly work: (group: Group) => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** Writes in one transaction at most; a longer queue is committed in several. */
const MAX_GROUP = 2000;

export class PgGroupCommitWriter {
  readonly #batches = new Batches<QueuedWrite>(MAX_GROUP, (group) => this.#commit(group));

  constructor(
    private readonly pool: pg.Pool,
    private readonly hooks: GroupHooks,
  ) {}

  /** Number of writes waiting for the next group. */
  get pending(): number {
    return this.#batches.pending;
  }

  /**
   * Queues `work` for the next group; `wsKeys` are the workspaces it writes (their log heads are
   * locked for it).
   * @returns what `work` returned, once the transaction holding it has committed
   */
  write<T>(
    wsKeys: readonly number[],
    work: (group: Group) => Promise<T | Deferred<T>> | T | Deferred<T>,
    claimed: readonly { workspaceId: string; key: string }[] = [],
  ): Promise<T> {
    if (this.#batches.closed) return Promise.reject(new Error('the store is closed'));
    return new Promise<T>((resolve, reject) => this.#batches.add({ wsKeys, claimed, work, resolve: resolve as (value: unknown) => void, reject }));
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
        const outcome = outcomes[i];
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
    try {
      const group = new Group(client);
      for (const item of items) group.claimed.push(...item.claimed);
      await this.#beginAndLock(group, items);
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
          await this.hooks.settle?.(group);
          await group.flushRows();
          await client.query('RELEASE SAVEPOINT w');
          outcomes.push({ ok: true, value: settled(value) });
        } catch (error) {
          await client.query('ROLLBACK TO SAVEPOINT w');
          group.restore(before);
          outcomes.push({ ok: false, value: error });
        }
      }
      if (!isolated) {
        await this.hooks.settle?.(group);
        for (const outcome of outcomes) outcome.value = settled(outcome.value);
      }
      await this.hooks.end(group);
      await group.flushRows();
      await client.query('COMMIT');
      return outcomes;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  }

  /**
   * Begins the group's transaction and locks the log heads of its workspaces, in ws_key order
   * (creating a missing one): one round trip, the keys (integers the store read) written into the
   * text. Acknowledged only once durable, whatever the server's or the role's default: SET LOCAL
   * lasts the transaction, so it holds behind a transaction-mode pooler too.
   */
  async #beginAndLock(group: Group, items: readonly QueuedWrite[]): Promise<void> {
    const keys = [...new Set(items.flatMap((item) => item.wsKeys))].sort((a, b) => a - b);
    if (!keys.every((key) => Number.isSafeInteger(key))) throw new Error(`not workspace keys: ${keys.join(', ')}`);
    const begin = 'BEGIN; SET LOCAL synchronous_commit = on';
    if (keys.length === 0) {
      await group.client.query(begin);
      return;
    }
    const lock = `SELECT ws_key, next_index FROM ledger_heads WHERE ws_key IN (${keys.join(', ')}) ORDER BY ws_key FOR UPDATE`;
    const results = (await group.client.query(`${begin}; ${lock}`)) as unknown as pg.QueryResult<{ ws_key: number; next_index: number }>[];
    let rows = results[results.length - 1].rows;
    if (rows.length < keys.length) {
      await group.client.query('INSERT INTO ledger_heads (ws_key, next_index) SELECT unnest($1::int[]), 0 ON CONFLICT DO NOTHING', [keys]);
      ({ rows } = await group.client.query<{ ws_key: number; next_index: number }>(lock));
    }
    for (const row of rows) group.heads.set(row.ws_key, row.next_index);
  }

  /** Commits what is queued, then refuses new writes. */
  async close(): Promise<void> {
    await this.#batches.close();
  }
}
