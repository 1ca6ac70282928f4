/**
 * A lease in a table: work that one replica at a time must do (the log's integration and
 * checkpoint signing) is done by the replica holding the lease row. The holder renews it well
 * before it expires; when the holder dies, another replica takes the row over once it has expired.
 *
 * A row rather than a session advisory lock: a lock held by a session dies with the connection
 * and does not survive a transaction-mode pooler (PgBouncer hands each transaction any server
 * connection), while a row only needs single statements. Expiry compares the replicas' clocks
 * (injected, for tests): clocks that differ by much less than the lease's length are assumed.
 *
 * Fencing: work under the lease runs in a transaction that first reads the row `FOR SHARE` and
 * checks it is still held ({@link Lease.fence}); a replica taking the row over waits for that
 * transaction, so a holder paused past its expiry never overlaps its successor's work.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type pg from 'pg';

/** How long a lease holds without renewal: a dead holder is replaced within this (plus a tick). */
export const LEASE_MS = 3000;

/**
 * Without waiting for the WAL flush (synchronous_commit off for this statement's transaction): a
 * renewal lost to a crash of PostgreSQL only lets the lease expire a little sooner, which the
 * fencing makes harmless.
 */
const TAKE = `
  INSERT INTO leases AS l (name, holder, expires_ms)
    SELECT $1, $2, $3::bigint + $4::bigint FROM (SELECT set_config('synchronous_commit', 'off', true)) AS no_flush
  ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_ms = excluded.expires_ms
    WHERE l.holder = excluded.holder OR l.expires_ms <= $3::bigint
  RETURNING holder`;

/** What follows this in a holder's name is the tag it was made with (the log key's, ledger.ts). */
const TAG = ' tag=';

export class Lease {
  /** who this replica is in the lease table, with its tag */
  readonly holder: string;

  constructor(
    private readonly pool: pg.Pool,
    readonly name: string,
    private readonly nowMs: () => number,
    readonly lengthMs: number = LEASE_MS,
    /** what the holder's work depends on and other replicas may compare (ledger.ts: the log key) */
    readonly tag?: string,
  ) {
    this.holder = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}${tag !== undefined ? `${TAG}${tag}` : ''}`;
  }

  /** A holder's name read back: who it is, and the tag it was made with, if any. */
  static parse(holder: string): { who: string; tag?: string } {
    const at = holder.lastIndexOf(TAG);
    return at === -1 ? { who: holder } : { who: holder.slice(0, at), tag: holder.slice(at + TAG.length) };
  }

  /** Takes the lease, or renews it when held: true when this replica holds it now. */
  async take(): Promise<boolean> {
    const { rows } = await this.pool.query<{ holder: string }>(TAKE, [this.name, this.holder, this.nowMs(), this.lengthMs]);
    return rows.length === 1;
  }

  /** Gives the lease up (a clean shutdown), so that another replica need not wait for it to expire. */
  async release(): Promise<void> {
    await this.pool.query('DELETE FROM leases WHERE name = $1 AND holder = $2', [this.name, this.holder]);
  }

  /**
   * Inside a transaction on `client`: true when this replica still holds the lease, which then
   * cannot change hands before the transaction ends.
   */
  async fence(client: pg.ClientBase): Promise<boolean> {
    const { rows } = await client.query('SELECT 1 FROM leases WHERE name = $1 AND holder = $2 AND expires_ms > $3 FOR SHARE', [
      this.name,
      this.holder,
      this.nowMs(),
    ]);
    return rows.length === 1;
  }

  /** The current holder, if any lease is unexpired (for tests and health output). */
  async current(): Promise<string | null> {
    const { rows } = await this.pool.query<{ holder: string }>('SELECT holder FROM leases WHERE name = $1 AND expires_ms > $2', [this.name, this.nowMs()]);
    return rows[0]?.holder ?? null;
  }
}
