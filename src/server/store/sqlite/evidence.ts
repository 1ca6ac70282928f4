/**
 * GRC evidence records (spec §2.2, §4.2, §4.3). Append-only: there is an insert and there are
 * reads, nothing else. Each record keeps its members as the client sent them, and its payload as
 * canonical JSON text, so that the signed members re-canonicalise to the same bytes (wire.md §4).
 */
import type Database from 'better-sqlite3';
import {
  EVIDENCE_INSERT_COLUMNS,
  evidenceInsertValues,
  evidenceListPage,
  type EvidenceListItem,
  type EvidenceListQuery,
  type EvidenceListRow,
  type EvidenceRow,
  type ExportQuery,
  type ExportRow,
  type ListPosition,
} from '../rows.js';
import type { Db } from './database.js';
import type * as Interface from '../store.js';

type ListRow = EvidenceListRow & { signed: number; seq: number };

/** The workspace has no key in workspace_keys: it was not created by provisioning. */
export class UnknownWorkspaceError extends Error {
  override readonly name = 'UnknownWorkspaceError';
}

/**
 * The list tables trail the records by at most this many before a batch writes their
 * entries. A batch touches each leaf once instead of once per record; a list reads the records not
 * yet in a batch from the end of the evidence table, at most this many rows.
 */
export const LIST_INDEX_BATCH = 1024;

/** The list tables: the column after ws_key each is keyed by and its query parameter (none for time). */
const LIST_TABLES = {
  time: { table: 'evidence_by_time', column: null },
  system: { table: 'evidence_by_system', column: 'system_name', param: 'systemName' },
  type: { table: 'evidence_by_type', column: 'record_type', param: 'recordType' },
} as const;

/** The columns a list reads, from evidence aliased `e`. */
const LIST_COLUMNS =
  'e.record_id, e.record_type, e.system_name, e.occurred_at, e.occurred_ms, e.seq, e.mapped_controls, e.source, e.client_sig IS NOT NULL AS signed';

/** Which filters a list query has; each shape is one pair of statements. */
export interface ListShape {
  system: boolean;
  type: boolean;
  after: boolean;
}

/**
 * The two statements of a list query of `shape`, each newest first, to be merged: `main` reads the
 * batched list table of the narrowest filter (system, else type, else time) by its key, `tail`
 * the records after through_seq by rowid range. Exported for the query-plan test.
 */
export function listStatements(shape: ListShape): { main: string; tail: string } {
  const list = shape.system ? LIST_TABLES.system : shape.type ? LIST_TABLES.type : LIST_TABLES.time;
  const keyed = list.column === null ? '' : ` AND l.${list.column} = @${list.param}`;
  const typeAlso = shape.system && shape.type ? ' AND e.record_type = @recordType' : '';
  const after = (alias: string) => (shape.after ? ` AND (${alias}.occurred_ms, ${alias}.seq) < (@afterMs, @afterSeq)` : '');
  const filters = `${shape.system ? ' AND e.system_name = @systemName' : ''}${shape.type ? ' AND e.record_type = @recordType' : ''}`;
  return {
    // CROSS JOIN keeps the list table the outer loop: its key order is the list's order.
    main: `SELECT ${LIST_COLUMNS} FROM ${list.table} AS l CROSS JOIN evidence AS e ON e.seq = l.seq
      WHERE l.ws_key = @key${keyed} AND l.occurred_ms >= @sinceMs${typeAlso}${after('l')}
      ORDER BY l.occurred_ms DESC, l.seq DESC LIMIT @take`,
    // NOT INDEXED: the rowid range after through_seq, never a walk of the workspace's records.
    tail: `SELECT ${LIST_COLUMNS} FROM evidence AS e NOT INDEXED
      WHERE e.seq > @throughSeq AND e.ws_key = @key${filters} AND e.occurred_ms >= @sinceMs${after('e')}
      ORDER BY e.occurred_ms DESC, e.seq DESC LIMIT @take`,
  };
}

/**
 * The statements counting what a list of `shape` holds in all (its `total`), from the same two
 * sources as {@link listStatements}: the batched list table and the tail after through_seq.
 */
export function countStatements(shape: Omit<ListShape, 'after'>): { main: string; tail: string } {
  const list = shape.system ? LIST_TABLES.system : shape.type ? LIST_TABLES.type : LIST_TABLES.time;
  const keyed = list.column === null ? '' : ` AND l.${list.column} = @${list.param}`;
  const both = shape.system && shape.type;
  const filters = `${shape.system ? ' AND e.system_name = @systemName' : ''}${shape.type ? ' AND e.record_type = @recordType' : ''}`;
  return {
    main: both
      ? `SELECT count(*) FROM ${list.table} AS l CROSS JOIN evidence AS e ON e.seq = l.seq
          WHERE l.ws_key = @key${keyed} AND l.occurred_ms >= @sinceMs AND e.record_type = @recordType`
      : `SELECT count(*) FROM ${list.table} AS l WHERE l.ws_key = @key${keyed} AND l.occurred_ms >= @sinceMs`,
    tail: `SELECT count(*) FROM evidence AS e NOT INDEXED WHERE e.seq > @throughSeq AND e.ws_key = @key${filters} AND e.occurred_ms >= @sinceMs`,
  };
}

/** Newest first: later occurred_ms, then later seq. */
function newerFirst(a: ListRow, b: ListRow): number {
  return b.occurred_ms - a.occurred_ms || b.seq - a.seq;
}

export class EvidenceStore implements Interface.EvidenceReads {
  readonly #insert: Database.Statement;
  readonly #get: Database.Statement<[string, string], EvidenceRow>;
  readonly #position: Database.Statement<[string, string], { occurred_ms: number; seq: number }>;
  readonly #keyOf: Database.Statement<[string], number>;
  readonly #lists = new Map<string, { main: Database.Statement; tail: Database.Statement }>();
  readonly #counts = new Map<string, { main: Database.Statement; tail: Database.Statement }>();
  readonly #exportPage: Database.Statement<[Record<string, unknown>], ExportRow>;
  readonly #seqOf: Database.Statement<[string, string], number>;
  readonly #throughSeq: Database.Statement<[], number>;
  readonly #lastSeq: Database.Statement<[], number | null>;
  readonly #indexBatch: Database.Statement<[number]>[];
  readonly #advance: Database.Statement<[number]>;
  /**
   * Workspace id → its integer key, for the indexes. Keys are never changed or
   * deleted, and every key this connection can read has committed: keys are added only by
   * provisioning, in a transaction of its own that has ended before any write or read runs.
   */
  readonly #keys = new Map<string, number>();

  /** @param listIndexBatch see {@link LIST_INDEX_BATCH} (smaller in tests) */
  constructor(
    private readonly db: Db,
    private readonly listIndexBatch = LIST_INDEX_BATCH,
  ) {
    this.#insert = db.prepare(`INSERT INTO evidence (${EVIDENCE_INSERT_COLUMNS.join(', ')}) VALUES (${EVIDENCE_INSERT_COLUMNS.map(() => '?').join(', ')})`);
    this.#get = db.prepare('SELECT * FROM evidence WHERE record_id = ? AND workspace_id = ?');
    this.#position = db.prepare('SELECT occurred_ms, seq FROM evidence WHERE record_id = ? AND workspace_id = ?');
    this.#keyOf = db.prepare<[string], number>('SELECT ws_key FROM workspace_keys WHERE workspace_id = ?').pluck();
    this.#throughSeq = db.prepare<[], number>("SELECT through_seq FROM index_progress WHERE name = 'evidence_lists'").pluck();
    this.#lastSeq = db.prepare<[], number | null>('SELECT max(seq) FROM evidence').pluck();
    this.#indexBatch = Object.values(LIST_TABLES).map(({ table, column }) => {
      const columns = column === null ? 'ws_key, occurred_ms, seq' : `ws_key, ${column}, occurred_ms, seq`;
      return db.prepare<[number]>(`INSERT INTO ${table} (${columns}) SELECT ${columns} FROM evidence WHERE seq > ? ORDER BY ${columns}`);
    });
    // By rowid from the position on: a range of the table, whatever the filters (which the scan applies).
    this.#exportPage = db.prepare<[Record<string, unknown>], ExportRow>(
      `SELECT * FROM evidence NOT INDEXED WHERE seq > @afterSeq AND ws_key = @key
         AND (@systemName IS NULL OR system_name = @systemName) AND (@recordType IS NULL OR record_type = @recordType)
         AND (@sinceMs IS NULL OR occurred_ms >= @sinceMs) AND (@untilMs IS NULL OR occurred_ms < @untilMs)
       ORDER BY seq LIMIT @limit`,
    );
    this.#seqOf = db.prepare<[string, string], number>('SELECT seq FROM evidence WHERE record_id = ? AND workspace_id = ?').pluck();
    this.#advance = db.prepare<[number]>("UPDATE index_progress SET through_seq = ? WHERE name = 'evidence_lists'");
  }

  /**
   * Writes the list-table entries of the records stored since the last batch, once they are
   * {@link LIST_INDEX_BATCH} or more, each table's sorted. Runs at the end of every group commit,
   * inside its transaction, so entries and records commit (or roll back) together.
   */
  indexPendingLists(): void {
    const through = this.#throughSeq.get()!;
    const last = this.#lastSeq.get() ?? 0;
    if (last - through < this.listIndexBatch) return;
    for (const statement of this.#indexBatch) statement.run(through);
    this.#advance.run(last);
  }

  /** The workspace's integer key; undefined for a workspace that was never provisioned. */
  #key(workspaceId: string): number | undefined {
    let key = this.#keys.get(workspaceId);
    if (key === undefined) {
      key = this.#keyOf.get(workspaceId);
      if (key !== undefined) this.#keys.set(workspaceId, key);
    }
    return key;
  }

  /** @throws UnknownWorkspaceError when the row's workspace was not provisioned */
  insert(row: EvidenceRow): void {
    const key = this.#key(row.workspace_id);
    if (key === undefined) throw new UnknownWorkspaceError(`workspace ${row.workspace_id} has no key: it was not provisioned`);
    // Positional parameters (an array): binding by name from an object costs a property lookup per name.
    this.#insert.run(evidenceInsertValues(row, key));
  }

  async get(workspaceId: string, recordId: string): Promise<EvidenceRow | undefined> {
    return this.#get.get(recordId, workspaceId);
  }

  /**
   * One page of an export: the workspace's records after `afterSeq` in the order stored (oldest
   * first), filtered, at most `limit`. Pages are read one at a time (no statement stays open
   * between them), so an export holds one page in memory and never blocks the writer.
   */
  async exportPage(query: ExportQuery): Promise<ExportRow[]> {
    const key = this.#key(query.workspaceId);
    if (key === undefined) return [];
    return this.#exportPage.all({
      key,
      afterSeq: query.afterSeq,
      systemName: query.systemName ?? null,
      recordType: query.recordType ?? null,
      sinceMs: query.sinceMs ?? null,
      untilMs: query.untilMs ?? null,
      limit: query.limit,
    });
  }

  /** Where a record stands in the order stored; undefined when it is not one of the workspace's. */
  async seqOf(workspaceId: string, recordId: string): Promise<number | undefined> {
    return this.#seqOf.get(recordId, workspaceId);
  }

  /** How many records a list query matches in all, whatever its page and cursor (the list's `total`). */
  async count(query: Omit<EvidenceListQuery, 'limit' | 'afterRecordId'>): Promise<number> {
    const key = this.#key(query.workspaceId);
    if (key === undefined) return 0;
    const shape = { system: query.systemName !== undefined, type: query.recordType !== undefined };
    const sqlKey = `${Number(shape.system)}${Number(shape.type)}`;
    let statements = this.#counts.get(sqlKey);
    if (!statements) {
      const sql = countStatements(shape);
      statements = { main: this.db.prepare(sql.main).pluck(), tail: this.db.prepare(sql.tail).pluck() };
      this.#counts.set(sqlKey, statements);
    }
    const params: Record<string, unknown> = { key, sinceMs: query.sinceMs };
    if (shape.system) params.systemName = query.systemName;
    if (shape.type) params.recordType = query.recordType;
    const { main, tail } = statements;
    return this.db.transaction(() => (main.get(params) as number) + (tail.get({ ...params, throughSeq: this.#throughSeq.get()! }) as number))();
  }

  /**
   * Newest first by occurred_at (epoch ms), ties by record_id, both descending (wire.md §5): ties
   * are ordered by seq, the order records were stored, which is record_id order.
   * @returns the page and, when more records follow, the position to continue from; null when
   *   `afterRecordId` names no record of the workspace (a cursor this service did not issue)
   */
  async list(query: EvidenceListQuery): Promise<{ records: EvidenceListItem[]; next: ListPosition | null } | null> {
    const key = this.#key(query.workspaceId);
    let after: { occurred_ms: number; seq: number } | undefined;
    if (query.afterRecordId !== undefined) {
      after = this.#position.get(query.afterRecordId, query.workspaceId);
      if (after === undefined) return null;
    }
    if (key === undefined) return { records: [], next: null };
    const shape: ListShape = { system: query.systemName !== undefined, type: query.recordType !== undefined, after: after !== undefined };
    const sqlKey = `${Number(shape.system)}${Number(shape.type)}${Number(shape.after)}`;
    let statements = this.#lists.get(sqlKey);
    if (!statements) {
      const sql = listStatements(shape);
      statements = { main: this.db.prepare(sql.main), tail: this.db.prepare(sql.tail) };
      this.#lists.set(sqlKey, statements);
    }
    const params: Record<string, unknown> = { key, sinceMs: query.sinceMs, take: query.limit + 1 };
    if (shape.system) params.systemName = query.systemName;
    if (shape.type) params.recordType = query.recordType;
    if (after !== undefined) {
      params.afterMs = after.occurred_ms;
      params.afterSeq = after.seq;
    }
    const { main, tail } = statements;
    // One read transaction: the batched entries and the tail after them seen at one instant.
    const rows = this.db.transaction(() => {
      const tailRows = tail.all({ ...params, throughSeq: this.#throughSeq.get()! }) as ListRow[];
      const mainRows = main.all(params) as ListRow[];
      return tailRows.length === 0
        ? mainRows
        : mainRows
            .concat(tailRows)
            .sort(newerFirst)
            .slice(0, query.limit + 1);
    })();
    return evidenceListPage(rows, query.limit);
  }
}
