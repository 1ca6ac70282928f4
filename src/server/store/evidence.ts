/**
 * GRC evidence records (spec §2.2, §4.2, §4.3). Append-only: there is an insert and there are
 * reads, nothing else. Each record keeps its members as the client sent them, and its payload as
 * canonical JSON text, so that the signed members re-canonicalise to the same bytes (wire.md §4).
 */
import type Database from 'better-sqlite3';
import type { Db } from './database.js';

/** A stored evidence record, as it sits in the table. */
export interface EvidenceRow {
  record_id: string;
  workspace_id: string;
  record_type: string;
  system_name: string;
  identity: string | null;
  resource: string | null;
  environment: string | null;
  /** as sent (or the time of ingest when it was not) */
  occurred_at: string;
  occurred_ms: number;
  /** canonical JSON text of the payload */
  payload: string;
  client_sig: string | null;
  client_sig_algo: string | null;
  source: string;
  /** JSON array text of control ids */
  mapped_controls: string;
  received_at: string;
  received_ms: number;
}

/** A record as listed (spec §2.4). */
export interface EvidenceListItem {
  record_id: string;
  record_type: string;
  system_name: string;
  occurred_at: string;
  mapped_controls: string[];
  source: string;
  signed: boolean;
}

/** Where a page ends: the sort key of its last record. */
export interface ListPosition {
  occurredMs: number;
  recordId: string;
}

export interface EvidenceListQuery {
  workspaceId: string;
  systemName?: string;
  recordType?: string;
  /** records with occurred_ms at or after this */
  sinceMs: number;
  limit: number;
  /** continue after this record (exclusive) */
  after?: ListPosition;
}

type ListRow = Omit<EvidenceListItem, 'mapped_controls' | 'signed'> & { mapped_controls: string; signed: number; occurred_ms: number };

export class EvidenceStore {
  readonly #insert: Database.Statement;
  readonly #get: Database.Statement<[string, string], EvidenceRow>;
  readonly #lists = new Map<string, Database.Statement>();

  constructor(private readonly db: Db) {
    this.#insert = db.prepare(
      `INSERT INTO evidence (record_id, workspace_id, record_type, system_name, identity, resource, environment,
         occurred_at, occurred_ms, payload, client_sig, client_sig_algo, source, mapped_controls, received_at, received_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#get = db.prepare('SELECT * FROM evidence WHERE record_id = ? AND workspace_id = ?');
  }

  insert(row: EvidenceRow): void {
    // Positional parameters: binding by name from an object costs a property lookup per name.
    this.#insert.run(
      row.record_id,
      row.workspace_id,
      row.record_type,
      row.system_name,
      row.identity,
      row.resource,
      row.environment,
      row.occurred_at,
      row.occurred_ms,
      row.payload,
      row.client_sig,
      row.client_sig_algo,
      row.source,
      row.mapped_controls,
      row.received_at,
      row.received_ms,
    );
  }

  get(workspaceId: string, recordId: string): EvidenceRow | undefined {
    return this.#get.get(recordId, workspaceId);
  }

  /**
   * Newest first by occurred_at (epoch ms), ties by record_id, both descending (wire.md §5).
   * @returns the page and, when more records follow, the position to continue from
   */
  list(query: EvidenceListQuery): { records: EvidenceListItem[]; next: ListPosition | null } {
    const conditions = ['workspace_id = @workspaceId', 'occurred_ms >= @sinceMs'];
    if (query.systemName !== undefined) conditions.push('system_name = @systemName');
    if (query.recordType !== undefined) conditions.push('record_type = @recordType');
    if (query.after !== undefined) conditions.push('(occurred_ms, record_id) < (@afterMs, @afterId)');
    const sql =
      `SELECT record_id, record_type, system_name, occurred_at, occurred_ms, mapped_controls, source, client_sig IS NOT NULL AS signed
       FROM evidence WHERE ${conditions.join(' AND ')}
       ORDER BY occurred_ms DESC, record_id DESC LIMIT @take`;
    let statement = this.#lists.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.#lists.set(sql, statement);
    }
    const rows = statement.all({
      workspaceId: query.workspaceId,
      sinceMs: query.sinceMs,
      systemName: query.systemName,
      recordType: query.recordType,
      afterMs: query.after?.occurredMs,
      afterId: query.after?.recordId,
      take: query.limit + 1,
    }) as ListRow[];
    const more = rows.length > query.limit;
    const page = more ? rows.slice(0, query.limit) : rows;
    const last = page[page.length - 1];
    return {
      records: page.map((row) => ({
        record_id: row.record_id,
        record_type: row.record_type,
        system_name: row.system_name,
        occurred_at: row.occurred_at,
        mapped_controls: JSON.parse(row.mapped_controls) as string[],
        source: row.source,
        signed: row.signed === 1,
      })),
      next: more && last ? { occurredMs: last.occurred_ms, recordId: last.record_id } : null,
    };
  }
}
