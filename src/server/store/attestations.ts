/**
 * Attestation records (spec §2.5, §4.4, §4.5). Append-only. Each keeps the attestation exactly
 * as sent, signature included, as canonical JSON text, and which message form its
 * `witness_sig` verified under (wire.md §4).
 */
import type Database from 'better-sqlite3';
import type { WitnessForm } from '../../core/index.js';
import type { Db } from './database.js';

/** Trust tiers the write endpoints answer with (spec §2.7, wire.md §4). */
export type TrustTier = 'witnessed' | 'declared';

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
  trust_tier: TrustTier;
  source: string;
  received_at: string;
  received_ms: number;
}

export class AttestationStore {
  readonly #insert: Database.Statement;

  constructor(db: Db) {
    this.#insert = db.prepare(
      `INSERT INTO attestations (attestation_id, workspace_id, system_name, agent_name, tool_name, input_hash, output_hash,
         executed_at, executed_ms, record, witness_form, trust_tier, source, received_at, received_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  insert(row: AttestationRow): void {
    this.#insert.run(
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
      row.trust_tier,
      row.source,
      row.received_at,
      row.received_ms,
    );
  }
}
