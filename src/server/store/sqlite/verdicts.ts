/**
 * Signed gate verdicts on SQLite (docs/ci.md): a row per verdict, stored with its log leaf (kind
 * `verdict`) in one group commit through the log's one append, so that a verdict the service
 * answered with is durable and logged.
 */
import type Database from 'better-sqlite3';
import { sha256Hex } from '../../../core/hashing.js';
import type { VerdictListQuery, VerdictRow } from '../rows.js';
import type { VerdictStore } from '../store.js';
import type { Db } from './database.js';
import type { LedgerStore } from './ledger.js';
import type { GroupCommitWriter } from './writer.js';

export class SqliteVerdictStore implements VerdictStore {
  readonly #insert: Database.Statement<[string, string, number, number, string]>;
  readonly #get: Database.Statement<[string, string], VerdictRow>;
  readonly #newest: Database.Statement<[string, number], VerdictRow>;
  readonly #before: Database.Statement<[string, string, number], VerdictRow>;

  constructor(
    db: Db,
    private readonly writer: GroupCommitWriter,
    private readonly ledger: LedgerStore,
  ) {
    this.#insert = db.prepare('INSERT INTO gate_verdicts (workspace_id, verdict_id, issued_ms, exit_code, record) VALUES (?, ?, ?, ?, ?)');
    const columns = 'SELECT verdict_id, workspace_id, issued_ms, exit_code, record FROM gate_verdicts';
    this.#get = db.prepare(`${columns} WHERE workspace_id = ? AND verdict_id = ?`);
    this.#newest = db.prepare(`${columns} WHERE workspace_id = ? ORDER BY verdict_id DESC LIMIT ?`);
    this.#before = db.prepare(`${columns} WHERE workspace_id = ? AND verdict_id < ? ORDER BY verdict_id DESC LIMIT ?`);
  }

  record(row: VerdictRow): Promise<number> {
    return this.writer.write(() => {
      this.#insert.run(row.workspace_id, row.verdict_id, row.issued_ms, row.exit_code, row.record);
      return this.ledger.append('verdict', row.verdict_id, row.workspace_id, new Date(row.issued_ms).toISOString(), sha256Hex(row.record));
    });
  }

  async get(workspaceId: string, verdictId: string): Promise<VerdictRow | undefined> {
    return this.#get.get(workspaceId, verdictId);
  }

  async list(query: VerdictListQuery): Promise<VerdictRow[]> {
    return query.beforeId === undefined ? this.#newest.all(query.workspaceId, query.limit) : this.#before.all(query.workspaceId, query.beforeId, query.limit);
  }
}
