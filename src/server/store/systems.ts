/**
 * AI systems per workspace (spec §2.9, wire.md §3), kept current as records and attestations
 * arrive. A system exists once any record or attestation names it in `system_name`; it is
 * registered once it has an ai_risk_assessment, and its risk tier is the risk_level of the latest
 * one by occurred_at (a tie goes to the one that arrived later).
 */
import type Database from 'better-sqlite3';
import { newId } from '../ids.js';
import type { Db } from './database.js';

export interface SystemRow {
  system_id: string;
  name: string;
  registered: number;
  risk_tier: string | null;
  last_evidence_ms: number;
  last_attested_ms: number | null;
}

export interface SystemEvent {
  workspaceId: string;
  name: string;
  /** when the evidence counts from: min(occurred/executed, received) */
  evidenceMs: number;
  /** an ai_risk_assessment: its risk level and occurred_at */
  risk?: { tier: string; atMs: number };
  /** an attestation: when it counts from */
  attestedMs?: number;
}

/** What a group's events leave for one system: the same row as one upsert per event, in order. */
interface PendingSystem {
  workspaceId: string;
  name: string;
  evidenceMs: number;
  risk: { tier: string; atMs: number } | undefined;
  attestedMs: number | undefined;
}

export class SystemStore {
  readonly #note: Database.Statement;
  readonly #list: Database.Statement<[string], SystemRow>;
  readonly #listMatching: Database.Statement<[string, string], SystemRow>;
  readonly #unattested: Database.Statement<[string, number], { n: number }>;

  constructor(db: Db) {
    // In an UPDATE every column reference reads the row as it was before the update.
    this.#note = db.prepare(
      `INSERT INTO systems (workspace_id, name, system_id, registered, risk_tier, risk_at_ms, last_evidence_ms, last_attested_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (workspace_id, name) DO UPDATE SET
         registered = max(registered, excluded.registered),
         risk_tier = CASE WHEN excluded.risk_at_ms IS NOT NULL AND (risk_at_ms IS NULL OR excluded.risk_at_ms >= risk_at_ms)
                          THEN excluded.risk_tier ELSE risk_tier END,
         risk_at_ms = CASE WHEN excluded.risk_at_ms IS NOT NULL AND (risk_at_ms IS NULL OR excluded.risk_at_ms >= risk_at_ms)
                           THEN excluded.risk_at_ms ELSE risk_at_ms END,
         last_evidence_ms = max(last_evidence_ms, excluded.last_evidence_ms),
         last_attested_ms = max(coalesce(last_attested_ms, excluded.last_attested_ms), coalesce(excluded.last_attested_ms, last_attested_ms))`,
    );
    const columns = 'system_id, name, registered, risk_tier, last_evidence_ms, last_attested_ms';
    this.#list = db.prepare(`SELECT ${columns} FROM systems WHERE workspace_id = ? ORDER BY name`);
    // lower() folds ASCII only: the name filter is an ASCII-case-insensitive substring match.
    this.#listMatching = db.prepare(`SELECT ${columns} FROM systems WHERE workspace_id = ? AND instr(lower(name), lower(?)) > 0 ORDER BY name`);
    this.#unattested = db.prepare('SELECT count(*) AS n FROM systems WHERE workspace_id = ? AND (last_attested_ms IS NULL OR last_attested_ms < ?)');
  }

  /**
   * Events of the current group commit by workspace and name, written once per system by
   * {@link flush} (a group of ten records over ten systems is ten upserts, not more, and a batch of
   * 100 attestations over a few systems a few).
   */
  readonly #pending = new Map<string, PendingSystem>();

  /**
   * Notes an event, merged into what {@link flush} writes: the latest evidence and attestation
   * times, and the risk of the latest assessment by occurred_at (on a tie, the later event), exactly
   * what one {@link note} per event in the same order would leave.
   */
  defer(event: SystemEvent): void {
    const key = `${event.workspaceId}\u0000${event.name}`;
    const seen = this.#pending.get(key);
    if (seen === undefined) {
      this.#pending.set(key, { workspaceId: event.workspaceId, name: event.name, evidenceMs: event.evidenceMs, risk: event.risk, attestedMs: event.attestedMs });
      return;
    }
    if (event.evidenceMs > seen.evidenceMs) seen.evidenceMs = event.evidenceMs;
    if (event.risk !== undefined && (seen.risk === undefined || event.risk.atMs >= seen.risk.atMs)) seen.risk = event.risk;
    if (event.attestedMs !== undefined && (seen.attestedMs === undefined || event.attestedMs > seen.attestedMs)) seen.attestedMs = event.attestedMs;
  }

  /** Forgets what was deferred (a new attempt at a group). */
  discard(): void {
    this.#pending.clear();
  }

  /** Writes what was deferred since the last flush or discard. */
  flush(): void {
    for (const system of this.#pending.values()) {
      this.note({
        workspaceId: system.workspaceId,
        name: system.name,
        evidenceMs: system.evidenceMs,
        ...(system.risk !== undefined ? { risk: system.risk } : {}),
        ...(system.attestedMs !== undefined ? { attestedMs: system.attestedMs } : {}),
      });
    }
    this.#pending.clear();
  }

  /** One upsert for one event. */
  note(event: SystemEvent): void {
    // Positional parameters: binding by name from an object costs a property lookup per name.
    this.#note.run(
      event.workspaceId,
      event.name,
      newId('sys'),
      event.risk ? 1 : 0,
      event.risk?.tier ?? null,
      event.risk?.atMs ?? null,
      event.evidenceMs,
      event.attestedMs ?? null,
    );
  }

  /** Systems by name; `nameContains` keeps those whose name contains it, ignoring ASCII case. */
  list(workspaceId: string, nameContains?: string): SystemRow[] {
    return nameContains === undefined || nameContains === '' ? this.#list.all(workspaceId) : this.#listMatching.all(workspaceId, nameContains);
  }

  /** Known systems with no attestation counted at or after `sinceMs`. */
  countUnattestedSince(workspaceId: string, sinceMs: number): number {
    return this.#unattested.get(workspaceId, sinceMs)!.n;
  }
}
