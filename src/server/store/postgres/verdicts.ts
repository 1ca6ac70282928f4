/**
 * Signed gate verdicts on PostgreSQL (docs/ci.md): a row per verdict, stored with its log leaf
 * (kind `verdict`) in one group commit through the log's one append (which takes the leaf index
 * under the workspace's log-head lock), as on SQLite.
 */
import type pg from 'pg';
import { sha256Hex } from '../../../core/hashing.js';
import { LedgerQueryError } from '../ledger-common.js';
import type { VerdictListQuery, VerdictRow } from '../rows.js';
import type { VerdictStore } from '../store.js';
import type { PgLedgerStore } from './ledger.js';
import { holdsNul } from './pool.js';
import type { WorkspaceKeys } from './workspace-keys.js';
import type { PgGroupCommitWriter } from './writer.js';

const INSERT_VERDICTS = `INSERT INTO gate_verdicts (workspace_id, verdict_id, issued_ms, exit_code, record)
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[], $5::text[])`;
const COLUMNS = 'SELECT verdict_id, workspace_id, issued_ms, exit_code, record FROM gate_verdicts';

export class PgVerdictStore implements VerdictStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly keys: WorkspaceKeys,
    private readonly writer: PgGroupCommitWriter,
    private readonly ledger: PgLedgerStore,
  ) {}

  async record(row: VerdictRow): Promise<number> {
    const wsKey = await this.keys.get(row.workspace_id);
    if (wsKey === undefined) throw new LedgerQueryError('not_found', `workspace ${row.workspace_id} has no key: it was not provisioned`);
    return this.writer.write([wsKey], async (group) => {
      group.add('gate_verdicts', INSERT_VERDICTS, [row.workspace_id, row.verdict_id, row.issued_ms, row.exit_code, row.record]);
      const issuedAt = new Date(row.issued_ms).toISOString();
      return this.ledger.append(group, wsKey, 'verdict', row.verdict_id, row.workspace_id, issuedAt, sha256Hex(row.record));
    });
  }

  async get(workspaceId: string, verdictId: string): Promise<VerdictRow | undefined> {
    if (holdsNul(verdictId)) return undefined;
    const { rows } = await this.pool.query<VerdictRow>(`${COLUMNS} WHERE workspace_id = $1 AND verdict_id = $2`, [workspaceId, verdictId]);
    return rows[0];
  }

  async list(query: VerdictListQuery): Promise<VerdictRow[]> {
    if (holdsNul(query.beforeId)) return [];
    // COLLATE "C": by code point, as SQLite orders them, whatever the database's locale.
    const { rows } =
      query.beforeId === undefined
        ? await this.pool.query<VerdictRow>(`${COLUMNS} WHERE workspace_id = $1 ORDER BY verdict_id COLLATE "C" DESC LIMIT $2`, [
            query.workspaceId,
            query.limit,
          ])
        : await this.pool.query<VerdictRow>(
            `${COLUMNS} WHERE workspace_id = $1 AND verdict_id COLLATE "C" < $2 ORDER BY verdict_id COLLATE "C" DESC LIMIT $3`,
            [query.workspaceId, query.beforeId, query.limit],
          );
    return rows;
  }
}
