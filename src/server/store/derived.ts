/**
 * What a write derives that every backend computes the same way (docs/service.md, coverage and
 * systems): the time a record counts from, and how a group's events for one system merge into the
 * one row they leave.
 */

/** When a record counts from: back-dating helps, future-dating cannot inflate freshness. */
export function countsFromMs(claimedMs: number, receivedMs: number): number {
  return Math.min(claimedMs, receivedMs);
}

/** What a stored record or attestation tells its AI system (docs/service.md "GET …/grc/systems"). */
export interface SystemEvent {
  workspaceId: string;
  name: string;
  /** when the evidence counts from: min(occurred/executed, received) */
  evidenceMs: number;
  /** an ai_risk_assessment: its risk level and occurred_at */
  risk?: { tier: string; atMs: number };
  /** an attestation: when it counts from */
  attestedMs?: number;
  /** an evidence record: its type and the controls it earned */
  record?: { type: string; controls: readonly string[] };
}

/** What a group's events leave for one system: the same row as one upsert per event, in order. */
export interface PendingSystem {
  workspaceId: string;
  name: string;
  evidenceMs: number;
  risk: { tier: string; atMs: number } | undefined;
  attestedMs: number | undefined;
  recordCount: number;
  recordTypes: Set<string>;
  controls: Set<string>;
}

/** What one event alone leaves for its system. */
export function pendingOf(event: SystemEvent): PendingSystem {
  return {
    workspaceId: event.workspaceId,
    name: event.name,
    evidenceMs: event.evidenceMs,
    risk: event.risk,
    attestedMs: event.attestedMs,
    recordCount: event.record ? 1 : 0,
    recordTypes: new Set(event.record ? [event.record.type] : []),
    controls: new Set(event.record?.controls),
  };
}

/**
 * Merges a later event of the same group into its system's pending row: the latest evidence and
 * attestation times, and the risk of the latest assessment by occurred_at (on a tie, the later
 * event), exactly what one upsert per event in the same order would leave.
 */
export function mergeSystemEvent(seen: PendingSystem, event: SystemEvent): void {
  if (event.record) {
    seen.recordCount += 1;
    seen.recordTypes.add(event.record.type);
    for (const control of event.record.controls) seen.controls.add(control);
  }
  if (event.evidenceMs > seen.evidenceMs) seen.evidenceMs = event.evidenceMs;
  if (event.risk !== undefined && (seen.risk === undefined || event.risk.atMs >= seen.risk.atMs)) seen.risk = event.risk;
  if (event.attestedMs !== undefined && (seen.attestedMs === undefined || event.attestedMs > seen.attestedMs)) seen.attestedMs = event.attestedMs;
}
