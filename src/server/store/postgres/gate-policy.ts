/**
 * The gate policy log on PostgreSQL (../gate-policy-log.ts, docs/ledger.md): each change is a row
 * of gate_policy_changes and a `gate_policy` leaf of the workspace's log, written by a group commit
 * that holds the workspace's log head, so a workspace's changes are in commit order at every
 * replica and its defaults are logged once; the policy in force is the latest change's.
 */
import type pg from 'pg';
import { DEFAULTS_CHANGED_BY, type GatePolicy, type GatePolicyChange, type GatePolicyEdit } from '../../../core/index.js';
import { legacyPolicy, policyOf, prepareChange, storedChange, type LegacyGateRow } from '../gate-policy-log.js';
import type { GatePolicyStore } from '../store.js';
import type { PgLogStorage } from './log-storage.js';
import type { WorkspaceKeys } from './workspace-keys.js';
import type { Group, PgGroupCommitWriter } from './writer.js';

const LATEST = 'SELECT record FROM gate_policy_changes WHERE workspace_id = $1 ORDER BY seq DESC LIMIT 1';

export class PgGatePolicyLog implements GatePolicyStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly writer: PgGroupCommitWriter,
    private readonly keys: WorkspaceKeys,
    private readonly ledger: PgLogStorage,
  ) {}

  /** Inside a group holding the workspace's head: the latest change, after logging the defaults when there is none, then `edit`'s. */
  async #log(group: Group, wsKey: number, workspaceId: string, edit: GatePolicyEdit | null, nowMs: number): Promise<GatePolicyChange> {
    const { rows } = await group.client.query<{ record: string }>(LATEST, [workspaceId]);
    let latest = rows[0] === undefined ? undefined : storedChange(rows[0].record);
    if (latest === undefined) {
      const legacy = await group.client.query<LegacyGateRow>('SELECT framework, mode, threshold FROM gate_policy WHERE workspace_id = $1', [workspaceId]);
      latest = await this.#append(
        group,
        wsKey,
        workspaceId,
        null,
        { action: 'defaults', changedBy: DEFAULTS_CHANGED_BY, policy: legacyPolicy(legacy.rows) },
        nowMs,
      );
    }
    return edit === null ? latest : this.#append(group, wsKey, workspaceId, policyOf(latest), edit, nowMs);
  }

  async #append(group: Group, wsKey: number, workspaceId: string, current: GatePolicy | null, edit: GatePolicyEdit, nowMs: number): Promise<GatePolicyChange> {
    const { record, text, sha256 } = prepareChange(workspaceId, current, edit, nowMs);
    // At once, not with the group's rows: a later write of the same group reads it.
    await group.client.query('INSERT INTO gate_policy_changes (change_id, workspace_id, record) VALUES ($1, $2, $3)', [record.change_id, workspaceId, text]);
    this.ledger.append(group, wsKey, 'gate_policy', record.change_id, workspaceId, record.changed_at, sha256);
    return record;
  }

  async change(workspaceId: string, edit: GatePolicyEdit, nowMs: number): Promise<GatePolicyChange | null> {
    const wsKey = await this.keys.get(workspaceId);
    if (wsKey === undefined) return null;
    return this.writer.write([wsKey], (group) => this.#log(group, wsKey, workspaceId, edit, nowMs));
  }

  async latest(workspaceId: string, nowMs: number): Promise<GatePolicyChange> {
    const { rows } = await this.pool.query<{ record: string }>({ name: 'govctl_gate_policy_latest', text: LATEST, values: [workspaceId] });
    if (rows[0] !== undefined) return storedChange(rows[0].record);
    const wsKey = await this.keys.get(workspaceId);
    if (wsKey === undefined) throw new Error(`no workspace ${workspaceId}`);
    return this.writer.write([wsKey], (group) => this.#log(group, wsKey, workspaceId, null, nowMs));
  }

  async changes(workspaceId: string, nowMs: number): Promise<GatePolicyChange[]> {
    await this.latest(workspaceId, nowMs);
    const { rows } = await this.pool.query<{ record: string }>('SELECT record FROM gate_policy_changes WHERE workspace_id = $1 ORDER BY seq', [workspaceId]);
    return rows.map((row) => storedChange(row.record));
  }
}
