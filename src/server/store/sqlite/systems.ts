/**
 * AI systems per workspace (spec §2.9, wire.md §3), kept current as records and attestations
 * arrive. A system exists once any record or attestation names it in `system_name`; it is
 * registered once it has an ai_risk_assessment, and its risk tier is the risk_level of the latest
 * one by occurred_at (a tie goes to the one that arrived later).
 */
import type Database from 'better-sqlite3';
import { newId } from '../../ids.js';
import type { SystemRow } from '../rows.js';
import type { Db } from './database.js';
import { byCodePoint } from '../../../core/controls/mapping.js';
import { mergeSystemEvent, pendingOf, type PendingSystem, type SystemEvent } from '../derived.js';
import type * as Interface from '../store.js';

export type { SystemEvent } from '../derived.js';

/** Sorted by code point, as mapped_controls are (docs/decisions.md). */
const sorted = (values: Iterable<string>): string[] => [...values].sort(byCodePoint);

/** What {@link SystemStore.flush} reads of a system's row before it writes it. */
interface StoredAggregates {
  record_types: string;
  controls: string;
}

/** Parsed JSON arrays of stored aggregates, by their text (a few distinct texts recur): parsed once each. */
const PARSED_LIMIT = 4096;

export class SystemStore implements Interface.SystemReads {
  readonly #note: Database.Statement;
  readonly #aggregates: Database.Statement<[string, string], StoredAggregates>;
  readonly #parsed = new Map<string, ReadonlySet<string>>();
  readonly #list: Database.Statement<[string], SystemRow>;
  readonly #listMatching: Database.Statement<[string, string], SystemRow>;
  readonly #byName: Database.Statement<[string, string], SystemRow>;
  readonly #unattested: Database.Statement<[string, number], { n: number }>;

  constructor(db: Db) {
    // In an UPDATE every column reference reads the row as it was before the update.
    this.#note = db.prepare(
      `INSERT INTO systems (workspace_id, name, system_id, registered, risk_tier, risk_at_ms, last_evidence_ms, last_attested_ms,
                            record_count, record_types, controls)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (workspace_id, name) DO UPDATE SET
         record_count = record_count + excluded.record_count,
         record_types = CASE WHEN excluded.record_types = '[]' THEN record_types ELSE
           (SELECT json_group_array(value) FROM (SELECT value FROM json_each(systems.record_types)
              UNION SELECT value FROM json_each(excluded.record_types) ORDER BY value)) END,
         controls = CASE WHEN excluded.controls = '[]' THEN controls ELSE
           (SELECT json_group_array(value) FROM (SELECT value FROM json_each(systems.controls)
              UNION SELECT value FROM json_each(excluded.controls) ORDER BY value)) END,
         registered = max(registered, excluded.registered),
         risk_tier = CASE WHEN excluded.risk_at_ms IS NOT NULL AND (risk_at_ms IS NULL OR excluded.risk_at_ms >= risk_at_ms)
                          THEN excluded.risk_tier ELSE risk_tier END,
         risk_at_ms = CASE WHEN excluded.risk_at_ms IS NOT NULL AND (risk_at_ms IS NULL OR excluded.risk_at_ms >= risk_at_ms)
                           THEN excluded.risk_at_ms ELSE risk_at_ms END,
         last_evidence_ms = max(last_evidence_ms, excluded.last_evidence_ms),
         last_attested_ms = max(coalesce(last_attested_ms, excluded.last_attested_ms), coalesce(excluded.last_attested_ms, last_attested_ms))`,
    );
    this.#aggregates = db.prepare('SELECT record_types, controls FROM systems WHERE workspace_id = ? AND name = ?');
    const columns = 'system_id, name, registered, risk_tier, last_evidence_ms, last_attested_ms, record_count, record_types, controls';
    this.#list = db.prepare(`SELECT ${columns} FROM systems WHERE workspace_id = ? ORDER BY name`);
    // lower() folds ASCII only: the name filter is an ASCII-case-insensitive substring match.
    this.#listMatching = db.prepare(`SELECT ${columns} FROM systems WHERE workspace_id = ? AND instr(lower(name), lower(?)) > 0 ORDER BY name`);
    this.#byName = db.prepare(`SELECT ${columns} FROM systems WHERE workspace_id = ? AND name = ?`);
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
   * what one upsert per event in the same order would leave.
   */
  defer(event: SystemEvent): void {
    const key = `${event.workspaceId}\u0000${event.name}`;
    const seen = this.#pending.get(key);
    if (seen === undefined) {
      this.#pending.set(key, pendingOf(event));
      return;
    }
    mergeSystemEvent(seen, event);
  }

  /** Forgets what was deferred (a new attempt at a group). */
  discard(): void {
    this.#pending.clear();
  }

  /** Writes what was deferred since the last flush or discard. */
  flush(): void {
    for (const system of this.#pending.values()) this.#upsert(system);
    this.#pending.clear();
  }

  /** The members of a stored JSON array of strings, as a set (memoised by text). */
  #setOf(text: string): ReadonlySet<string> {
    let set = this.#parsed.get(text);
    if (set === undefined) {
      if (this.#parsed.size >= PARSED_LIMIT) this.#parsed.clear();
      set = new Set(JSON.parse(text) as string[]);
      this.#parsed.set(text, set);
    }
    return set;
  }

  /**
   * The record types or controls of `pending` not yet in `stored` (JSON array text), as the JSON
   * text the upsert unions in: '[]' when there is none, so that the upsert keeps the stored array
   * as it is instead of unioning it in SQL (json_each, a sort, json_group_array) at every group
   * commit, when a system's types and controls rarely change.
   */
  #added(pending: ReadonlySet<string>, stored: string | undefined): string {
    if (pending.size === 0) return '[]';
    if (stored === undefined) return JSON.stringify(sorted(pending));
    const known = this.#setOf(stored);
    let added: string[] | null = null;
    for (const value of pending) if (!known.has(value)) (added ??= []).push(value);
    return added === null ? '[]' : JSON.stringify(sorted(added));
  }

  #upsert(system: PendingSystem): void {
    // Read under the group's write lock, in its transaction: what the upsert below updates.
    const stored = system.recordTypes.size > 0 || system.controls.size > 0 ? this.#aggregates.get(system.workspaceId, system.name) : undefined;
    // Positional parameters: binding by name from an object costs a property lookup per name.
    this.#note.run(
      system.workspaceId,
      system.name,
      newId('sys'),
      system.risk ? 1 : 0,
      system.risk?.tier ?? null,
      system.risk?.atMs ?? null,
      system.evidenceMs,
      system.attestedMs ?? null,
      system.recordCount,
      this.#added(system.recordTypes, stored?.record_types),
      this.#added(system.controls, stored?.controls),
    );
  }

  /** Systems by name; `nameContains` keeps those whose name contains it, ignoring ASCII case. */
  async list(workspaceId: string, nameContains?: string): Promise<SystemRow[]> {
    return nameContains === undefined || nameContains === '' ? this.#list.all(workspaceId) : this.#listMatching.all(workspaceId, nameContains);
  }

  /** The system of exactly this name, or undefined. */
  async get(workspaceId: string, name: string): Promise<SystemRow | undefined> {
    return this.#byName.get(workspaceId, name);
  }

  /** Known systems with no attestation counted at or after `sinceMs`. */
  async countUnattestedSince(workspaceId: string, sinceMs: number): Promise<number> {
    return this.#unattested.get(workspaceId, sinceMs)!.n;
  }
}
