/**
 * Attestation records (spec §2.5, §4.4, §4.5). Append-only. Each keeps the attestation exactly
 * as sent, signature included, as canonical JSON text, which message form its `witness_sig`
 * verified under (wire.md §4), the signature's bytes (accepted once in the whole service: a unique
 * index) and the verifying key's fingerprint.
 */
import type Database from 'better-sqlite3';
import { ATTESTATION_INSERT_COLUMNS, attestationInsertValues, type AttestationListQuery, type AttestationRow, type StoredAttestationRow } from '../rows.js';
import type { Db } from './database.js';
import type * as Interface from '../store.js';

const READ_COLUMNS =
  'seq, attestation_id, system_name, tool_name, executed_at, executed_ms, record, witness_form, key_fingerprint, trust_tier, tier_reason, source, received_at, received_ms';

export class AttestationStore implements Interface.AttestationReads {
  readonly #insert: Database.Statement;
  readonly #get: Database.Statement<[string, string], StoredAttestationRow>;
  readonly #position: Database.Statement<[string, string], { executed_ms: number; seq: number }>;
  readonly #lists = new Map<string, Database.Statement>();

  constructor(private readonly db: Db) {
    // A signature already stored (by any workspace) inserts nothing: the caller sees changes = 0.
    this.#insert = db.prepare(
      `INSERT INTO attestations (${ATTESTATION_INSERT_COLUMNS.join(', ')}) VALUES (${ATTESTATION_INSERT_COLUMNS.map(() => '?').join(', ')})
       ON CONFLICT (signed_ms, witness_sig) WHERE witness_sig IS NOT NULL DO NOTHING`,
    );
    this.#get = db.prepare(`SELECT ${READ_COLUMNS} FROM attestations WHERE workspace_id = ? AND attestation_id = ?`);
    this.#position = db.prepare('SELECT executed_ms, seq FROM attestations WHERE workspace_id = ? AND attestation_id = ?');
  }

  /** Stores one row; false (nothing stored) when its witness_sig is stored already. */
  insert(row: AttestationRow): boolean {
    const { changes } = this.#insert.run(attestationInsertValues(row));
    return changes === 1;
  }

  /** One attestation of a workspace, or undefined. */
  async get(workspaceId: string, attestationId: string): Promise<StoredAttestationRow | undefined> {
    return this.#get.get(workspaceId, attestationId);
  }

  /**
   * A page of a workspace's attestations, newest first (executed time, then order stored), one
   * more than `limit` when there are more; null when `afterId` is not one of the workspace's.
   */
  async list(query: AttestationListQuery): Promise<StoredAttestationRow[] | null> {
    let after: { executed_ms: number; seq: number } | undefined;
    if (query.afterId !== undefined) {
      after = this.#position.get(query.workspaceId, query.afterId);
      if (after === undefined) return null;
    }
    const sql =
      `SELECT ${READ_COLUMNS} FROM attestations INDEXED BY attestations_by_time
       WHERE workspace_id = @workspaceId AND executed_ms >= @sinceMs AND executed_ms < @untilMs` +
      (query.systemName !== undefined ? ' AND system_name = @systemName' : '') +
      (query.toolName !== undefined ? ' AND tool_name = @toolName' : '') +
      (after ? ' AND (executed_ms, seq) < (@afterMs, @afterSeq)' : '') +
      ' ORDER BY executed_ms DESC, seq DESC LIMIT @take';
    let statement = this.#lists.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.#lists.set(sql, statement);
    }
    return statement.all({
      workspaceId: query.workspaceId,
      sinceMs: query.sinceMs,
      untilMs: query.untilMs,
      take: query.limit + 1,
      ...(query.systemName !== undefined ? { systemName: query.systemName } : {}),
      ...(query.toolName !== undefined ? { toolName: query.toolName } : {}),
      ...(after ? { afterMs: after.executed_ms, afterSeq: after.seq } : {}),
    }) as StoredAttestationRow[];
  }
}
