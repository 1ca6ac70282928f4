/**
 * Attestation records (spec §2.5, §4.4, §4.5). Append-only. Each keeps the attestation exactly
 * as sent, signature included, as canonical JSON text, which message form its `witness_sig`
 * verified under (wire.md §4), the signature's bytes (accepted once in the whole service: a unique
 * index, migration 8) and the verifying key's fingerprint.
 */
import type Database from 'better-sqlite3';
import type { WitnessForm } from '../../core/index.js';
import type { Db } from './database.js';

/** Trust tiers the write endpoints answer with (spec §2.7, wire.md §4). */
export type TrustTier = 'witnessed' | 'declared';

/**
 * Why a verified signature earned only `declared` (docs/security.md): the workspace's policy is
 * `registered` and the key is not registered, or revoked, or the signature is in the legacy form.
 */
export type TierReason = 'unregistered_key' | 'revoked_key' | 'legacy_form';

export interface AttestationRow {
  attestation_id: string;
  workspace_id: string;
  system_name: string;
  agent_name: string;
  tool_name: string;
  input_hash: string;
  output_hash: string;
  /** as sent (or the time of ingest when it was not) */
  executed_at: string;
  executed_ms: number;
  /** canonical JSON text of the attestation as sent */
  record: string;
  witness_form: WitnessForm | null;
  /** the 64 signature bytes of a verified witness_sig; null when unsigned */
  witness_sig: Buffer | null;
  /**
   * with witness_sig: the executed_at its message covers, epoch ms, or 0 when the attestation
   * has none; null when unsigned. Leads the signature's unique index (migration 8).
   */
  signed_ms: number | null;
  /** hex SHA-256 of the verifying key's bytes; null when unsigned (or stored before schema 8) */
  key_fingerprint: string | null;
  trust_tier: TrustTier;
  tier_reason: TierReason | null;
  source: string;
  received_at: string;
  received_ms: number;
}

/** A stored attestation as the read endpoints return it (the record as stored text). */
export type StoredAttestationRow = Omit<AttestationRow, 'workspace_id' | 'witness_sig' | 'signed_ms' | 'input_hash' | 'output_hash' | 'agent_name'> & { seq: number };

export interface AttestationListQuery {
  workspaceId: string;
  systemName?: string;
  toolName?: string;
  /** executed_ms at or after */
  sinceMs: number;
  /** executed_ms before */
  untilMs: number;
  limit: number;
  /** continue after this attestation (exclusive), where it stands in the order as stored */
  afterId?: string;
}

const READ_COLUMNS =
  'seq, attestation_id, system_name, tool_name, executed_at, executed_ms, record, witness_form, key_fingerprint, trust_tier, tier_reason, source, received_at, received_ms';

export class AttestationStore {
  readonly #insert: Database.Statement;
  readonly #get: Database.Statement<[string, string], StoredAttestationRow>;
  readonly #position: Database.Statement<[string, string], { executed_ms: number; seq: number }>;
  readonly #lists = new Map<string, Database.Statement>();

  constructor(private readonly db: Db) {
    // A signature already stored (by any workspace) inserts nothing: the caller sees changes = 0.
    this.#insert = db.prepare(
      `INSERT INTO attestations (attestation_id, workspace_id, system_name, agent_name, tool_name, input_hash, output_hash,
         executed_at, executed_ms, record, witness_form, witness_sig, signed_ms, key_fingerprint, trust_tier, tier_reason, source, received_at, received_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (signed_ms, witness_sig) WHERE witness_sig IS NOT NULL DO NOTHING`,
    );
    this.#get = db.prepare(`SELECT ${READ_COLUMNS} FROM attestations WHERE workspace_id = ? AND attestation_id = ?`);
    this.#position = db.prepare('SELECT executed_ms, seq FROM attestations WHERE workspace_id = ? AND attestation_id = ?');
  }

  /** Stores one row; false (nothing stored) when its witness_sig is stored already. */
  insert(row: AttestationRow): boolean {
    const { changes } = this.#insert.run(
      row.attestation_id,
      row.workspace_id,
      row.system_name,
      row.agent_name,
      row.tool_name,
      row.input_hash,
      row.output_hash,
      row.executed_at,
      row.executed_ms,
      row.record,
      row.witness_form,
      row.witness_sig,
      row.signed_ms,
      row.key_fingerprint,
      row.trust_tier,
      row.tier_reason,
      row.source,
      row.received_at,
      row.received_ms,
    );
    return changes === 1;
  }

  /** One attestation of a workspace, or undefined. */
  get(workspaceId: string, attestationId: string): StoredAttestationRow | undefined {
    return this.#get.get(workspaceId, attestationId);
  }

  /**
   * A page of a workspace's attestations, newest first (executed time, then order stored), one
   * more than `limit` when there are more; null when `afterId` is not one of the workspace's.
   */
  list(query: AttestationListQuery): StoredAttestationRow[] | null {
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
