/**
 * Copies a SQLite service database into an empty PostgreSQL one (`govctl admin migrate`), table by
 * table, so that `govctl serve` on PostgreSQL carries on where the SQLite service stopped: the same
 * ids, keys (hashes only), policies, records, attestations, and the same transparency log (leaves,
 * complete subtrees, signed checkpoints, cosignatures, witnesses), its next leaf index after the
 * last one copied.
 *
 * - Bounded memory: each table is read with an iterator and written `batchSize` rows at a time.
 * - All or nothing: every row is written in one PostgreSQL transaction, so an interrupted copy
 *   leaves the target as it was (its schema only), and running again starts over.
 * - Refuses a target that holds any data: two services' rows are never merged.
 * - Refuses a source a `govctl serve` is running on (its lock, sqlite/database.ts); the source is
 *   read in one read transaction, a consistent snapshot.
 * - Afterwards each workspace's log root is computed from the leaf entries on both sides
 *   (RFC 6962 hashing, core/ledger) and compared.
 *
 * Not copied: what starts afresh on a new service anyway (request and record budgets, the log's
 * lease), idempotency keys older than their retention, and the SQLite backend's own list tables
 * (PostgreSQL indexes the evidence table instead).
 */
import type pg from 'pg';
import { CompactTree, leafHash } from '../../core/index.js';
import { IDEMPOTENCY_RETENTION_MS } from './idempotency.js';
import { MigrationSideError, MigrationTargetNotEmptyError } from './errors.js';
import { migrate as migratePostgres } from './postgres/migrate.js';
import { createPool } from './postgres/pool.js';
import { acquireServeLock, openDatabase, type Db } from './sqlite/database.js';
import { openSqliteStore } from './sqlite/store.js';

/** One table's copy, as reported to a progress callback. */
export interface CopyProgress {
  table: string;
  /** rows copied so far, all tables */
  done: number;
  /** rows to copy, all tables */
  total: number;
}

/** A workspace's log on both sides: size and root hash (hex) computed from the leaf entries. */
export interface WorkspaceLogComparison {
  workspace_id: string;
  source: { tree_size: number; root: string };
  target: { tree_size: number; root: string };
  same: boolean;
}

export interface CopyResult {
  /** rows copied per table */
  rows: Record<string, number>;
  logs: WorkspaceLogComparison[];
}

export interface CopyOptions {
  /** rows per INSERT (default 1000) */
  batchSize?: number;
  /** called after each batch */
  onProgress?: (progress: CopyProgress) => void;
  /** the clock for the idempotency keys' retention (default Date.now) */
  nowMs?: number;
}

type Column = readonly [name: string, pgType: string];

/** A table copied as it is: its columns (in both schemas) and PostgreSQL types. */
interface TableCopy {
  table: string;
  columns: readonly Column[];
  /** the SQLite query giving the columns in order (default: SELECT them from the table) */
  select?: string;
  /** parameters of `select` */
  params?: readonly unknown[];
  /** the column is GENERATED ALWAYS AS IDENTITY in PostgreSQL: the source's values are kept */
  identity?: string;
}

const T = 'text';
const B = 'bigint';
const I = 'integer';
const BYTES = 'bytea';

function tables(nowMs: number): TableCopy[] {
  return [
    {
      table: 'orgs',
      columns: [
        ['org_id', T],
        ['name', T],
        ['created_ms', B],
      ],
    },
    {
      table: 'workspaces',
      columns: [
        ['workspace_id', T],
        ['org_id', T],
        ['name', T],
        ['created_ms', B],
      ],
    },
    {
      table: 'workspace_keys',
      columns: [
        ['ws_key', I],
        ['workspace_id', T],
      ],
      identity: 'ws_key',
    },
    {
      table: 'users',
      columns: [
        ['user_id', T],
        ['org_id', T],
        ['email', T],
        ['created_ms', B],
      ],
    },
    {
      table: 'api_keys',
      columns: [
        ['key_id', T],
        ['key_hash', BYTES],
        ['prefix', T],
        ['workspace_id', T],
        ['user_id', T],
        ['name', T],
        ['created_ms', B],
        ['expires_ms', B],
        ['revoked_ms', B],
        ['role', T],
      ],
    },
    {
      table: 'evidence',
      columns: [
        ['seq', B],
        ['record_id', T],
        ['workspace_id', T],
        ['ws_key', I],
        ['record_type', T],
        ['system_name', T],
        ['identity', T],
        ['resource', T],
        ['environment', T],
        ['occurred_at', T],
        ['occurred_ms', B],
        ['payload', T],
        ['client_sig', T],
        ['client_sig_algo', T],
        ['source', T],
        ['mapped_controls', T],
        ['received_at', T],
        ['received_ms', B],
      ],
      select: `SELECT e.seq, e.record_id, e.workspace_id, coalesce(e.ws_key, k.ws_key), e.record_type, e.system_name, e.identity, e.resource,
          e.environment, e.occurred_at, e.occurred_ms, e.payload, e.client_sig, e.client_sig_algo, e.source,
          e.mapped_controls, e.received_at, e.received_ms
        FROM evidence e LEFT JOIN workspace_keys k ON k.workspace_id = e.workspace_id ORDER BY e.seq`,
      identity: 'seq',
    },
    {
      table: 'attestations',
      columns: [
        ['seq', B],
        ['attestation_id', T],
        ['workspace_id', T],
        ['system_name', T],
        ['agent_name', T],
        ['tool_name', T],
        ['input_hash', T],
        ['output_hash', T],
        ['executed_at', T],
        ['executed_ms', B],
        ['record', T],
        ['witness_form', T],
        ['witness_sig', BYTES],
        ['signed_ms', B],
        ['key_fingerprint', T],
        ['trust_tier', T],
        ['tier_reason', T],
        ['source', T],
        ['received_at', T],
        ['received_ms', B],
      ],
      identity: 'seq',
    },
    {
      table: 'control_coverage',
      columns: [
        ['workspace_id', T],
        ['control_id', T],
        ['last_earned_ms', B],
      ],
    },
    {
      table: 'systems',
      columns: [
        ['workspace_id', T],
        ['name', T],
        ['system_id', T],
        ['registered', I],
        ['risk_tier', T],
        ['risk_at_ms', B],
        ['last_evidence_ms', B],
        ['last_attested_ms', B],
        ['record_count', B],
        ['record_types', T],
        ['controls', T],
      ],
    },
    {
      table: 'gate_policy',
      columns: [
        ['workspace_id', T],
        ['framework', T],
        ['mode', T],
        ['threshold', 'double precision'],
        ['updated_ms', B],
      ],
    },
    {
      table: 'gate_policy_changes',
      columns: [
        ['seq', B],
        ['change_id', T],
        ['workspace_id', T],
        ['record', T],
      ],
      identity: 'seq',
    },
    {
      table: 'signing_keys',
      columns: [
        ['workspace_id', T],
        ['fingerprint', T],
        ['public_key', T],
        ['name', T],
        ['created_ms', B],
        ['revoked_ms', B],
      ],
    },
    {
      table: 'witness_policy',
      columns: [
        ['workspace_id', T],
        ['policy', T],
        ['updated_ms', B],
      ],
    },
    {
      table: 'idempotency_keys',
      columns: [
        ['workspace_id', T],
        ['idem_key', T],
        ['content_hash', T],
        ['result', T],
        ['created_ms', B],
      ],
      // expired keys would be refused by both backends anyway
      select: 'SELECT workspace_id, idem_key, content_hash, result, created_ms FROM idempotency_keys WHERE created_ms >= ?',
      params: [nowMs - IDEMPOTENCY_RETENTION_MS],
    },
    {
      table: 'ledger_leaves',
      columns: [
        ['ws_key', I],
        ['leaf_index', B],
        ['kind', T],
        ['record_id', T],
        ['entry', BYTES],
      ],
    },
    {
      table: 'ledger_state',
      columns: [
        ['ws_key', I],
        ['integrated_size', B],
      ],
    },
    {
      table: 'ledger_nodes',
      columns: [
        ['ws_key', I],
        ['level', I],
        ['idx', B],
        ['hash', BYTES],
      ],
    },
    {
      table: 'ledger_checkpoints',
      columns: [
        ['ws_key', I],
        ['tree_size', B],
        ['root', BYTES],
        ['note', T],
        ['signed_ms', B],
      ],
    },
    {
      table: 'ledger_cosignatures',
      columns: [
        ['ws_key', I],
        ['tree_size', B],
        ['name', T],
        ['line', T],
        ['added_ms', B],
      ],
    },
    {
      table: 'ledger_witnesses',
      columns: [
        ['ws_key', I],
        ['name', T],
        ['vkey', T],
        ['added_ms', B],
        ['revoked_ms', B],
      ],
    },
  ];
}

/** The tables whose rows make a PostgreSQL database "not empty" for a migration. */
const DATA_TABLES = ['orgs', 'workspaces', 'workspace_keys', 'evidence', 'attestations', 'ledger_leaves'];

function selectOf(copy: TableCopy): string {
  return copy.select ?? `SELECT ${copy.columns.map(([name]) => name).join(', ')} FROM ${copy.table}`;
}

function countOf(db: Db, copy: TableCopy): number {
  return db
    .prepare<unknown[], number>(`SELECT count(*) FROM (${selectOf(copy)})`)
    .pluck()
    .get(...(copy.params ?? []))!;
}

function insertOf(copy: TableCopy): string {
  const names = copy.columns.map(([name]) => name).join(', ');
  const arrays = copy.columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
  return `INSERT INTO ${copy.table} (${names})${copy.identity ? ' OVERRIDING SYSTEM VALUE' : ''} SELECT * FROM unnest(${arrays})`;
}

/** Whether the PostgreSQL database holds any organisation, workspace, record or log leaf. */
async function hasData(client: pg.ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ any: boolean }>(`SELECT ${DATA_TABLES.map((t) => `EXISTS (SELECT 1 FROM ${t})`).join(' OR ')} AS any`);
  return rows[0].any;
}

/**
 * Copies the SQLite database at `from` into the PostgreSQL database at `to` (its schema created or
 * brought up to date first) and compares each workspace's log on both sides.
 * @throws MigrationTargetNotEmptyError when the target holds data; MigrationSideError for anything
 *   else, naming the side and holding the backend's error (DatabaseInUseError when a `govctl serve`
 *   runs on the source, SchemaVersionError, pg's errors when PostgreSQL cannot be reached, …)
 */
export async function copySqliteToPostgres(from: string, to: string, options: CopyOptions = {}): Promise<CopyResult> {
  const batchSize = options.batchSize ?? 1000;
  const nowMs = options.nowMs ?? Date.now();
  const lock = onSide('source', () => acquireServeLock(from));
  try {
    // Opening and closing the store once integrates every pending leaf: what is copied is the log
    // as served.
    const db = await onSide('source', async () => {
      await openSqliteStore(from).close();
      return openDatabase(from);
    });
    const pool = createPool(to, { max: 1, applicationName: 'govctl admin migrate' });
    try {
      return await onSide('target', async () => {
        const client = await pool.connect();
        let broken: Error | undefined;
        try {
          await migratePostgres(client);
          if (await hasData(client)) throw notEmpty();
          // One read transaction on the source: a consistent snapshot, whatever `govctl admin` does meanwhile.
          db.exec('BEGIN');
          try {
            const rows = await copyAll(db, client, tables(nowMs), batchSize, options.onProgress);
            const logs = await compareLogs(db, client, batchSize);
            return { rows, logs };
          } finally {
            // nothing was written to the source: the read transaction just ends
            if (db.inTransaction) db.exec('ROLLBACK');
          }
        } catch (error) {
          broken = error as Error;
          throw error;
        } finally {
          client.release(broken);
        }
      });
    } finally {
      await pool.end().catch(() => {});
      db.close();
    }
  } finally {
    lock.release();
  }
}

/** Runs `work`, its failures (but a non-empty target) wrapped as the `side`'s. */
function onSide<T>(side: 'source' | 'target', work: () => T): T {
  const wrap = (error: unknown) =>
    error instanceof MigrationTargetNotEmptyError || error instanceof MigrationSideError ? error : new MigrationSideError(side, error);
  let result: T;
  try {
    result = work();
  } catch (error) {
    throw wrap(error);
  }
  if (result instanceof Promise) return result.catch((error: unknown) => Promise.reject(wrap(error))) as T;
  return result;
}

function notEmpty(): MigrationTargetNotEmptyError {
  return new MigrationTargetNotEmptyError('the target PostgreSQL database holds data already: govctl admin migrate copies into an empty database only');
}

async function copyAll(
  db: Db,
  client: pg.ClientBase,
  copies: readonly TableCopy[],
  batchSize: number,
  onProgress?: (progress: CopyProgress) => void,
): Promise<Record<string, number>> {
  const total = copies.reduce((sum, copy) => sum + countOf(db, copy), 0);
  const copied: Record<string, number> = {};
  let done = 0;
  await client.query('BEGIN');
  try {
    // durable when COMMIT returns, whatever the server's default
    await client.query('SET LOCAL synchronous_commit = on');
    // checked again inside the transaction: nothing may have arrived since
    if (await hasData(client)) throw new MigrationTargetNotEmptyError('the target PostgreSQL database received data during the migration');
    for (const copy of copies) {
      const insert = insertOf(copy);
      const columns = copy.columns.length;
      let batch: unknown[][] = copy.columns.map(() => []);
      let inBatch = 0;
      let count = 0;
      const flush = async () => {
        if (inBatch === 0) return;
        await client.query(insert, batch);
        count += inBatch;
        done += inBatch;
        batch = copy.columns.map(() => []);
        inBatch = 0;
        onProgress?.({ table: copy.table, done, total });
      };
      const iterator = db
        .prepare(selectOf(copy))
        .raw()
        .iterate(...(copy.params ?? [])) as IterableIterator<unknown[]>;
      try {
        for (const row of iterator) {
          for (let i = 0; i < columns; i++) batch[i].push(row[i] ?? null);
          inBatch += 1;
          if (inBatch >= batchSize) await flush();
        }
      } finally {
        iterator.return?.();
      }
      await flush();
      copied[copy.table] = count;
      // new rows take identities after the copied ones
      if (copy.identity !== undefined) {
        await client.query(
          `SELECT setval(pg_get_serial_sequence('${copy.table}', '${copy.identity}'), coalesce((SELECT max(${copy.identity}) FROM ${copy.table}), 1), (SELECT count(*) > 0 FROM ${copy.table}))`,
        );
      }
    }
    // Each workspace's next leaf index: after its last copied leaf (the PostgreSQL backend keeps
    // it in a row, taken under lock by every write, postgres/writer.ts).
    await client.query(
      `INSERT INTO ledger_heads (ws_key, next_index)
       SELECT k.ws_key, coalesce((SELECT max(l.leaf_index) + 1 FROM ledger_leaves l WHERE l.ws_key = k.ws_key), 0) FROM workspace_keys k`,
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
  return copied;
}

/** The hex root and size of a log from its leaf entries read in index order; a gap in the indexes is an error. */
async function rootOf(
  entries: AsyncIterable<{ leaf_index: number; entry: Buffer }> | Iterable<{ leaf_index: number; entry: Buffer }>,
): Promise<{ tree_size: number; root: string }> {
  const tree = CompactTree.empty();
  for await (const { leaf_index, entry } of entries) {
    if (leaf_index !== tree.size) throw new Error(`the log has no leaf ${tree.size} (the next is ${leaf_index})`);
    tree.append(leafHash(entry));
  }
  return { tree_size: tree.size, root: tree.root().toString('hex') };
}

async function* targetLeaves(client: pg.ClientBase, wsKey: number, batchSize: number): AsyncGenerator<{ leaf_index: number; entry: Buffer }> {
  let next = 0;
  for (;;) {
    const { rows } = await client.query<{ leaf_index: number; entry: Buffer }>(
      'SELECT leaf_index, entry FROM ledger_leaves WHERE ws_key = $1 AND leaf_index >= $2 ORDER BY leaf_index LIMIT $3',
      [wsKey, next, batchSize],
    );
    yield* rows;
    if (rows.length < batchSize) return;
    next = rows[rows.length - 1].leaf_index + 1;
  }
}

/** Each workspace's log root from the entries, on both sides (workspaces as the source has them). */
async function compareLogs(db: Db, client: pg.ClientBase, batchSize: number): Promise<WorkspaceLogComparison[]> {
  const workspaces = db.prepare<[], { ws_key: number; workspace_id: string }>('SELECT ws_key, workspace_id FROM workspace_keys ORDER BY ws_key').all();
  const leaves = db.prepare<[number], { leaf_index: number; entry: Buffer }>(
    'SELECT leaf_index, entry FROM ledger_leaves WHERE ws_key = ? ORDER BY leaf_index',
  );
  const out: WorkspaceLogComparison[] = [];
  for (const { ws_key, workspace_id } of workspaces) {
    const source = await rootOf(leaves.iterate(ws_key));
    const { rows } = await client.query<{ ws_key: number }>('SELECT ws_key FROM workspace_keys WHERE workspace_id = $1', [workspace_id]);
    const target = rows[0] === undefined ? { tree_size: 0, root: '' } : await rootOf(targetLeaves(client, rows[0].ws_key, batchSize));
    out.push({ workspace_id, source, target, same: rows[0] !== undefined && source.tree_size === target.tree_size && source.root === target.root });
  }
  return out;
}

export { MigrationSideError, MigrationTargetNotEmptyError } from './errors.js';
