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
  /** continue after this record (exclusive), where it stands in the order as stored */
  afterRecordId?: string;
}

type ListRow = Omit<EvidenceListItem, 'mapped_controls' | 'signed'> & { mapped_controls: string; signed: number; occurred_ms: number };

/** The workspace has no key in workspace_keys: it was not created by provisioning. */
export class UnknownWorkspaceError extends Error {
  override readonly name = 'UnknownWorkspaceError';
}

export class EvidenceStore {
  readonly #insert: Database.Statement;
  readonly #get: Database.Statement<[string, string], EvidenceRow>;
  readonly #position: Database.Statement<[string, string], { occurred_ms: number; seq: number }>;
  readonly #keyOf: Database.Statement<[string], number>;
  readonly #lists = new Map<string, Database.Statement>();
  /**
   * Workspace id → its integer key (migration 3), for the indexes. Keys are never changed or
   * deleted, and every key this connection can read has committed: keys are added only by
   * provisioning, in a transaction of its own that has ended before any write or read runs.
   */
  readonly #keys = new Map<string, number>();

  constructor(private readonly db: Db) {
    this.#insert = db.prepare(
      `INSERT INTO evidence (record_id, workspace_id, ws_key, record_type, system_name, identity, resource, environment,
         occurred_at, occurred_ms, payload, client_sig, client_sig_algo, source, mapped_controls, received_at, received_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#get = db.prepare('SELECT * FROM evidence WHERE record_id = ? AND workspace_id = ?');
    this.#position = db.prepare('SELECT occurred_ms, seq FROM evidence WHERE record_id = ? AND workspace_id = ?');
    this.#keyOf = db.prepare<[string], number>('SELECT ws_key FROM workspace_keys WHERE workspace_id = ?').pluck();
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
    // Positional parameters: binding by name from an object costs a property lookup per name.
    this.#insert.run(
      row.record_id,
      row.workspace_id,
      key,
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
   * Newest first by occurred_at (epoch ms), ties by record_id, both descending (wire.md §5): ties
   * are ordered by seq, the order records were stored, which is record_id order (migration 3).
   * @returns the page and, when more records follow, the position to continue from; null when
   *   `afterRecordId` names no record of the workspace (a cursor this service did not issue)
   */
  list(query: EvidenceListQuery): { records: EvidenceListItem[]; next: ListPosition | null } | null {
    const key = this.#key(query.workspaceId);
    let after: { occurred_ms: number; seq: number } | undefined;
    if (query.afterRecordId !== undefined) {
      after = this.#position.get(query.afterRecordId, query.workspaceId);
      if (after === undefined) return null;
    }
    if (key === undefined) return { records: [], next: null };
    const conditions = ['ws_key = @key', 'occurred_ms >= @sinceMs'];
    if (query.systemName !== undefined) conditions.push('system_name = @systemName');
    if (query.recordType !== undefined) conditions.push('record_type = @recordType');
    if (after !== undefined) conditions.push('(occurred_ms, seq) < (@afterMs, @afterSeq)');
    // Named, not left to the planner: without statistics it walks evidence_by_time for a system's
    // next page (a range on both sides looks narrower), which for a rare system reads most rows.
    const index = query.systemName !== undefined ? 'evidence_by_system' : query.recordType !== undefined ? 'evidence_by_type' : 'evidence_by_time';
    const sql =
      `SELECT record_id, record_type, system_name, occurred_at, occurred_ms, mapped_controls, source, client_sig IS NOT NULL AS signed
       FROM evidence INDEXED BY ${index} WHERE ${conditions.join(' AND ')}
       ORDER BY occurred_ms DESC, seq DESC LIMIT @take`;
    let statement = this.#lists.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.#lists.set(sql, statement);
    }
    const rows = statement.all({
      key,
      sinceMs: query.sinceMs,
      systemName: query.systemName,
      recordType: query.recordType,
      afterMs: after?.occurred_ms,
      afterSeq: after?.seq,
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
