/**
 * The derived tables (systems, control coverage), written at the end of each group commit in the
 * transaction of the records they follow: one multi-row upsert per table per group, the group's
 * events merged first exactly as the SQLite backend merges them (one row per system, one per
 * control; the latest time wins, the risk of the latest assessment by occurred_at, a tie to the
 * later event). Rows are written in key order, and only by a group that holds the workspace's log
 * head (writer.ts), so two replicas never wait on each other's rows here in opposite orders.
 */
import type pg from 'pg';
import { newId } from '../../ids.js';
import { byCodePoint } from '../../../core/controls/mapping.js';
import { mergeSystemEvent, pendingOf, type PendingSystem, type SystemEvent } from '../derived.js';

export type { SystemEvent } from '../derived.js';

export interface CoverageEvent {
  workspaceId: string;
  controls: readonly string[];
  earnedMs: number;
}

export type DerivedEvent = { system: SystemEvent } | { coverage: CoverageEvent };

/**
 * The JSON-array-text union of two sorted lists, sorted, as text like JSON.stringify's. When the
 * stored list already holds every element of the group's (the common case once a system's record
 * types and controls are known) it is kept as it is, without the union's unnest, sort and
 * aggregate: measured, that halves the cost of a group's systems upsert (docs/decisions.md).
 */
const UNION = (column: string) =>
  `CASE WHEN excluded.${column} = '[]' OR s.${column} = excluded.${column} OR s.${column}::jsonb @> excluded.${column}::jsonb THEN s.${column} ELSE
     (SELECT '[' || string_agg(to_json(v)::text, ',' ORDER BY v COLLATE "C") || ']'
        FROM (SELECT json_array_elements_text(s.${column}::json) UNION SELECT json_array_elements_text(excluded.${column}::json)) AS u (v)) END`;

const UPSERT_SYSTEMS = `
  INSERT INTO systems AS s (workspace_id, name, system_id, registered, risk_tier, risk_at_ms, last_evidence_ms, last_attested_ms,
                            record_count, record_types, controls)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[],
                       $9::bigint[], $10::text[], $11::text[])
  ON CONFLICT (workspace_id, name) DO UPDATE SET
    record_count = s.record_count + excluded.record_count,
    record_types = ${UNION('record_types')},
    controls = ${UNION('controls')},
    registered = GREATEST(s.registered, excluded.registered),
    risk_tier = CASE WHEN excluded.risk_at_ms IS NOT NULL AND (s.risk_at_ms IS NULL OR excluded.risk_at_ms >= s.risk_at_ms)
                     THEN excluded.risk_tier ELSE s.risk_tier END,
    risk_at_ms = CASE WHEN excluded.risk_at_ms IS NOT NULL AND (s.risk_at_ms IS NULL OR excluded.risk_at_ms >= s.risk_at_ms)
                      THEN excluded.risk_at_ms ELSE s.risk_at_ms END,
    last_evidence_ms = GREATEST(s.last_evidence_ms, excluded.last_evidence_ms),
    last_attested_ms = GREATEST(s.last_attested_ms, excluded.last_attested_ms)`;

const UPSERT_COVERAGE = `
  INSERT INTO control_coverage AS c (workspace_id, control_id, last_earned_ms)
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
  ON CONFLICT (workspace_id, control_id) DO UPDATE SET last_earned_ms = GREATEST(c.last_earned_ms, excluded.last_earned_ms)`;

/** The statements that write the derived rows of a group's events (in the group's transaction). */
export function derivedStatements(events: readonly DerivedEvent[]): { sql: string; params: unknown[] }[] {
  const statements: { sql: string; params: unknown[] }[] = [];
  const systems = new Map<string, PendingSystem>();
  const coverage = new Map<string, { workspaceId: string; control: string; ms: number }>();
  for (const event of events) {
    if ('coverage' in event) {
      const { workspaceId, controls, earnedMs } = event.coverage;
      for (const control of controls) {
        const key = `${workspaceId}\u0000${control}`;
        const seen = coverage.get(key);
        if (seen === undefined) coverage.set(key, { workspaceId, control, ms: earnedMs });
        else if (earnedMs > seen.ms) seen.ms = earnedMs;
      }
      continue;
    }
    const e = event.system;
    const key = `${e.workspaceId}\u0000${e.name}`;
    const seen = systems.get(key);
    if (seen === undefined) systems.set(key, pendingOf(e));
    else mergeSystemEvent(seen, e);
  }
  if (systems.size > 0) {
    const rows = [...systems.entries()].sort(([a], [b]) => byCodePoint(a, b)).map(([, s]) => s);
    statements.push({
      sql: UPSERT_SYSTEMS,
      params: [
        rows.map((s) => s.workspaceId),
        rows.map((s) => s.name),
        rows.map(() => newId('sys')),
        rows.map((s) => (s.risk ? 1 : 0)),
        rows.map((s) => s.risk?.tier ?? null),
        rows.map((s) => s.risk?.atMs ?? null),
        rows.map((s) => s.evidenceMs),
        rows.map((s) => s.attestedMs ?? null),
        rows.map((s) => s.recordCount),
        rows.map((s) => JSON.stringify([...s.recordTypes].sort(byCodePoint))),
        rows.map((s) => JSON.stringify([...s.controls].sort(byCodePoint))),
      ],
    });
  }
  if (coverage.size > 0) {
    const rows = [...coverage.entries()].sort(([a], [b]) => byCodePoint(a, b)).map(([, c]) => c);
    statements.push({ sql: UPSERT_COVERAGE, params: [rows.map((c) => c.workspaceId), rows.map((c) => c.control), rows.map((c) => c.ms)] });
  }
  return statements;
}

/** Coverage: control id → epoch ms it was last earned. */
export async function lastEarned(pool: pg.Pool, workspaceId: string): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ control_id: string; last_earned_ms: number }>(
    'SELECT control_id, last_earned_ms FROM control_coverage WHERE workspace_id = $1',
    [workspaceId],
  );
  return new Map(rows.map((row) => [row.control_id, row.last_earned_ms]));
}
