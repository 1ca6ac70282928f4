/**
 * Reads of evidence records and attestations on PostgreSQL, with the SQLite backend's ordering and
 * pagination: the evidence list newest first by the record's time, ties by record_id descending
 * (docs/wire-format.md; SQLite's order by seq is the same there, where one process hands ids out in storage
 * order, but not across replicas), continued after a record given by id; the attestation list ties
 * by the order stored; exports in the order stored after a seq. A workspace's seqs follow
 * commit order (writer.ts: its writes hold the workspace's log head), so an export continued
 * after a seq never misses a record committed later.
 */
import type pg from 'pg';
import {
  evidenceListPage,
  type AttestationListQuery,
  type EvidenceListItem,
  type EvidenceListQuery,
  type EvidenceListRow,
  type EvidenceRow,
  type ExportQuery,
  type ExportRow,
  type ListPosition,
  type StoredAttestationRow,
} from '../rows.js';
import type { AttestationReads, EvidenceReads } from '../store.js';
import { holdsNul } from './pool.js';
import type { WorkspaceKeys } from './workspace-keys.js';

const EVIDENCE_COLUMNS =
  'record_id, workspace_id, record_type, system_name, identity, resource, environment, occurred_at, occurred_ms, payload, client_sig, client_sig_algo, source, mapped_controls, received_at, received_ms';

type ListRow = EvidenceListRow & { seq: number; signed: boolean };

/** The WHERE clause and parameters of a list or count; `$1` is the workspace key. */
function listFilters(query: Omit<EvidenceListQuery, 'limit' | 'afterRecordId'>, key: number): { where: string; values: unknown[] } {
  const values: unknown[] = [key, query.sinceMs];
  let where = 'ws_key = $1 AND occurred_ms >= $2';
  if (query.systemName !== undefined) {
    values.push(query.systemName);
    where += ` AND system_name = $${values.length}`;
  }
  if (query.recordType !== undefined) {
    values.push(query.recordType);
    where += ` AND record_type = $${values.length}`;
  }
  return { where, values };
}

export class PgEvidenceReads implements EvidenceReads {
  constructor(
    private readonly pool: pg.Pool,
    private readonly keys: WorkspaceKeys,
  ) {}

  async get(workspaceId: string, recordId: string): Promise<EvidenceRow | undefined> {
    if (holdsNul(recordId)) return undefined;
    const { rows } = await this.pool.query<EvidenceRow>({
      name: 'govctl_evidence_get',
      text: `SELECT ${EVIDENCE_COLUMNS} FROM evidence WHERE record_id = $1 AND workspace_id = $2`,
      values: [recordId, workspaceId],
    });
    return rows[0];
  }

  async list(query: EvidenceListQuery): Promise<{ records: EvidenceListItem[]; next: ListPosition | null } | null> {
    // U+0000 is in no stored text (PostgreSQL's text cannot hold it): nothing matches
    if (holdsNul(query.afterRecordId)) return null;
    if (holdsNul(query.systemName, query.recordType)) return { records: [], next: null };
    let after: { occurred_ms: number; record_id: string } | undefined;
    if (query.afterRecordId !== undefined) {
      const { rows } = await this.pool.query<{ occurred_ms: number; record_id: string }>(
        'SELECT occurred_ms, record_id FROM evidence WHERE record_id = $1 AND workspace_id = $2',
        [query.afterRecordId, query.workspaceId],
      );
      after = rows[0];
      if (after === undefined) return null;
    }
    const key = await this.keys.get(query.workspaceId);
    if (key === undefined) return { records: [], next: null };
    const { where, values } = listFilters(query, key);
    let sql = `SELECT record_id, record_type, system_name, occurred_at, occurred_ms, seq, mapped_controls, source, client_sig IS NOT NULL AS signed
      FROM evidence WHERE ${where}`;
    if (after !== undefined) {
      values.push(after.occurred_ms, after.record_id);
      sql += ` AND (occurred_ms, record_id) < ($${values.length - 1}, $${values.length})`;
    }
    values.push(query.limit + 1);
    sql += ` ORDER BY occurred_ms DESC, record_id DESC LIMIT $${values.length}`;
    const { rows } = await this.pool.query<ListRow>(sql, values);
    return evidenceListPage(rows, query.limit);
  }

  async count(query: Omit<EvidenceListQuery, 'limit' | 'afterRecordId'>): Promise<number> {
    if (holdsNul(query.systemName, query.recordType)) return 0;
    const key = await this.keys.get(query.workspaceId);
    if (key === undefined) return 0;
    const { where, values } = listFilters(query, key);
    const { rows } = await this.pool.query<{ n: number }>(`SELECT count(*) AS n FROM evidence WHERE ${where}`, values);
    return rows[0].n;
  }

  async exportPage(query: ExportQuery): Promise<ExportRow[]> {
    if (holdsNul(query.systemName, query.recordType)) return [];
    const key = await this.keys.get(query.workspaceId);
    if (key === undefined) return [];
    const { rows } = await this.pool.query<ExportRow>({
      name: 'govctl_evidence_export',
      text: `SELECT ${EVIDENCE_COLUMNS}, seq FROM evidence WHERE ws_key = $1 AND seq > $2
        AND ($3::text IS NULL OR system_name = $3) AND ($4::text IS NULL OR record_type = $4)
        AND ($5::bigint IS NULL OR occurred_ms >= $5) AND ($6::bigint IS NULL OR occurred_ms < $6)
        ORDER BY seq LIMIT $7`,
      values: [key, query.afterSeq, query.systemName ?? null, query.recordType ?? null, query.sinceMs ?? null, query.untilMs ?? null, query.limit],
    });
    return rows;
  }

  async seqOf(workspaceId: string, recordId: string): Promise<number | undefined> {
    if (holdsNul(recordId)) return undefined;
    const { rows } = await this.pool.query<{ seq: number }>('SELECT seq FROM evidence WHERE record_id = $1 AND workspace_id = $2', [recordId, workspaceId]);
    return rows[0]?.seq;
  }
}

const ATTESTATION_COLUMNS =
  'seq, attestation_id, system_name, tool_name, executed_at, executed_ms, record, witness_form, key_fingerprint, trust_tier, tier_reason, source, received_at, received_ms';

export class PgAttestationReads implements AttestationReads {
  constructor(private readonly pool: pg.Pool) {}

  async get(workspaceId: string, attestationId: string): Promise<StoredAttestationRow | undefined> {
    if (holdsNul(attestationId)) return undefined;
    const { rows } = await this.pool.query<StoredAttestationRow>(
      `SELECT ${ATTESTATION_COLUMNS} FROM attestations WHERE workspace_id = $1 AND attestation_id = $2`,
      [workspaceId, attestationId],
    );
    return rows[0];
  }

  async list(query: AttestationListQuery): Promise<StoredAttestationRow[] | null> {
    if (holdsNul(query.afterId)) return null;
    if (holdsNul(query.systemName, query.toolName)) return [];
    let after: { executed_ms: number; seq: number } | undefined;
    if (query.afterId !== undefined) {
      const { rows } = await this.pool.query<{ executed_ms: number; seq: number }>(
        'SELECT executed_ms, seq FROM attestations WHERE workspace_id = $1 AND attestation_id = $2',
        [query.workspaceId, query.afterId],
      );
      after = rows[0];
      if (after === undefined) return null;
    }
    const values: unknown[] = [query.workspaceId, query.sinceMs, query.untilMs];
    let sql = `SELECT ${ATTESTATION_COLUMNS} FROM attestations WHERE workspace_id = $1 AND executed_ms >= $2 AND executed_ms < $3`;
    if (query.systemName !== undefined) {
      values.push(query.systemName);
      sql += ` AND system_name = $${values.length}`;
    }
    if (query.toolName !== undefined) {
      values.push(query.toolName);
      sql += ` AND tool_name = $${values.length}`;
    }
    if (after !== undefined) {
      values.push(after.executed_ms, after.seq);
      sql += ` AND (executed_ms, seq) < ($${values.length - 1}, $${values.length})`;
    }
    values.push(query.limit + 1);
    sql += ` ORDER BY executed_ms DESC, seq DESC LIMIT $${values.length}`;
    const { rows } = await this.pool.query<StoredAttestationRow>(sql, values);
    return rows;
  }
}
