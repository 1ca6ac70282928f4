/**
 * The gate policy as evidence (docs/ledger.md, "Gate policy changes"): every change of a
 * workspace's gate policy is a record, appended to the workspace's transparency log as a
 * `gate_policy` leaf, and the policy in force is the `policy` of the latest change. A change
 * record carries the whole policy after it, so that one record says what was in force from then
 * on, with no replay of the changes before it.
 */
import { FRAMEWORKS, type Framework } from '../records/types.js';
import { DEFAULT_GATE_POLICY, mergeGatePolicy, type GatePolicy, type GateRule } from './gates.js';

/**
 * `defaults`: the policy a workspace starts with (logged when it is created, or before its first
 * gate evaluation when it has none logged); `set` and `unset`: one framework's rule changed, or put
 * back to the default.
 */
export const GATE_POLICY_ACTIONS = ['defaults', 'set', 'unset'] as const;
export type GatePolicyAction = (typeof GATE_POLICY_ACTIONS)[number];

/** Who logs the defaults a workspace starts with. */
export const DEFAULTS_CHANGED_BY = 'govctl';

/** One change of a workspace's gate policy, as stored, logged and returned (members in canonical order). */
export interface GatePolicyChange {
  action: GatePolicyAction;
  /** `gpc_…`: the change's id, and its leaf's `id` */
  change_id: string;
  /** ISO 8601 UTC with milliseconds; its leaf's `received_at` */
  changed_at: string;
  /** the admin command's operator, the API key's user, or `govctl` for the defaults */
  changed_by: string;
  /** the framework changed; null for `defaults` */
  framework: Framework | null;
  /** the whole policy in force after the change: every framework's `{mode, threshold}` */
  policy: Record<Framework, { mode: GateRule['mode']; threshold: number }>;
  workspace_id: string;
}

/** What a change does, before it has an id, a time and a workspace. */
export type GatePolicyEdit =
  | { action: 'defaults'; changedBy: string; policy: GatePolicy }
  | { action: 'set'; changedBy: string; framework: Framework; rule: Partial<GateRule> }
  | { action: 'unset'; changedBy: string; framework: Framework };

/** A policy as plain members in framework order (what a change record holds). */
function plainPolicy(policy: GatePolicy): GatePolicyChange['policy'] {
  const out = {} as GatePolicyChange['policy'];
  for (const framework of FRAMEWORKS) out[framework] = { mode: policy[framework].mode, threshold: policy[framework].threshold };
  return out;
}

/**
 * The change record of `edit` applied to the policy in force (`current`, null when the workspace
 * has none logged yet).
 *
 * @example gatePolicyChange(null, { action: 'unset', changedBy: 'ops', framework: 'eu_ai_act' }, { workspaceId, changeId, changedAt }).policy.eu_ai_act
 * // { mode: 'required', threshold: 80 }
 */
export function gatePolicyChange(
  current: GatePolicy | null,
  edit: GatePolicyEdit,
  at: { workspaceId: string; changeId: string; changedAt: string },
): GatePolicyChange {
  const base = current ?? DEFAULT_GATE_POLICY;
  let policy: GatePolicy;
  if (edit.action === 'defaults') policy = edit.policy;
  else if (edit.action === 'set') policy = mergeGatePolicy(base, { [edit.framework]: edit.rule });
  else policy = mergeGatePolicy(base, { [edit.framework]: DEFAULT_GATE_POLICY[edit.framework] });
  return {
    action: edit.action,
    change_id: at.changeId,
    changed_at: at.changedAt,
    changed_by: edit.changedBy,
    framework: edit.action === 'defaults' ? null : edit.framework,
    policy: plainPolicy(policy),
    workspace_id: at.workspaceId,
  };
}

/**
 * Whether each framework's rule in force is the workspace's own or the default, from its changes
 * (oldest first): the latest `set` of a framework makes it the workspace's, an `unset` the
 * default's; `defaults` makes a rule the workspace's where it differs from the default.
 */
export function gatePolicySources(changes: readonly GatePolicyChange[]): Record<Framework, 'workspace' | 'default'> {
  const out = {} as Record<Framework, 'workspace' | 'default'>;
  for (const framework of FRAMEWORKS) out[framework] = 'default';
  for (const change of changes) {
    if (change.action === 'defaults') {
      for (const framework of FRAMEWORKS) {
        const rule = change.policy[framework];
        const fallback = DEFAULT_GATE_POLICY[framework];
        out[framework] = rule.mode === fallback.mode && rule.threshold === fallback.threshold ? 'default' : 'workspace';
      }
    } else if (change.framework !== null) {
      out[change.framework] = change.action === 'set' ? 'workspace' : 'default';
    }
  }
  return out;
}
