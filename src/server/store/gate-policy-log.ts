/**
 * What every backend's gate policy log shares (docs/ledger.md, "Gate policy changes"): a change
 * is stored as the canonical JSON of its record, appended to the workspace's transparency log as a
 * `gate_policy` leaf in the same transaction, and the policy in force is the latest change's
 * `policy`. A workspace with no change logged yet gets its defaults logged first: the core
 * defaults, with the rules it had set before the log existed (the `gate_policy` table, no longer
 * written) laid over them.
 */
import {
  canonicalize,
  DEFAULT_GATE_POLICY,
  gatePolicyChange,
  mergeGatePolicy,
  recordSha256,
  type Framework,
  type GateMode,
  type GatePolicy,
  type GatePolicyChange,
  type GatePolicyEdit,
} from '../../core/index.js';
import { newId } from '../ids.js';

/** A rule of the `gate_policy` table (before the log). */
export interface LegacyGateRow {
  framework: Framework;
  mode: GateMode;
  threshold: number;
}

/** The policy a workspace had before the log: its rows over the defaults. */
export function legacyPolicy(rows: readonly LegacyGateRow[]): GatePolicy {
  const own: Partial<Record<Framework, { mode: GateMode; threshold: number }>> = {};
  for (const row of rows) own[row.framework] = { mode: row.mode, threshold: row.threshold };
  return mergeGatePolicy(DEFAULT_GATE_POLICY, own);
}

/** A change as the backend writes it: the record, the text stored, and the leaf's arguments. */
export interface PreparedChange {
  record: GatePolicyChange;
  /** the record's canonical JSON: what the table holds */
  text: string;
  /** the leaf's sha256 (of that text) */
  sha256: string;
}

/** The record of `edit` applied to the policy in force (`current`: the latest change's, or null for none). */
export function prepareChange(workspaceId: string, current: GatePolicy | null, edit: GatePolicyEdit, nowMs: number): PreparedChange {
  const record = gatePolicyChange(current, edit, { workspaceId, changeId: newId('gpc'), changedAt: new Date(nowMs).toISOString() });
  return { record, text: canonicalize(record), sha256: recordSha256(record as unknown as Record<string, unknown>) };
}

/** A stored change's record (its text is canonical JSON the service wrote). */
export function storedChange(text: string): GatePolicyChange {
  return JSON.parse(text) as GatePolicyChange;
}

/** The policy of a change record, as the gates judge by. */
export function policyOf(change: GatePolicyChange): GatePolicy {
  return mergeGatePolicy(DEFAULT_GATE_POLICY, change.policy);
}
