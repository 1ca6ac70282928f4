/**
 * The gate policy log on SQLite (../gate-policy-log.ts, docs/ledger.md): each change is a row of
 * gate_policy_changes and a `gate_policy` leaf of the workspace's log, written in one group
 * commit; the policy in force is the latest change's.
 */
import type Database from 'better-sqlite3';
import { DEFAULTS_CHANGED_BY, type GatePolicy, type GatePolicyChange, type GatePolicyEdit } from '../../../core/index.js';
import { legacyPolicy, policyOf, prepareChange, storedChange, type LegacyGateRow } from '../gate-policy-log.js';
import type { GatePolicyStore } from '../store.js';
import type { Db } from './database.js';
import type { SqliteLogStorage } from './log-storage.js';
import type { GroupCommitWriter } from './writer.js';

export class GatePolicyLog implements GatePolicyStore {
  readonly #latest: Database.Statement<[string], string>;
  readonly #all: Database.Statement<[string], string>;
  readonly #legacy: Database.Statement<[string], LegacyGateRow>;
  readonly #insert: Database.Statement<[string, string, string]>;
  readonly #exists: Database.Statement<[string], number>;

  constructor(
    db: Db,
    private readonly writer: GroupCommitWriter,
    private readonly ledger: SqliteLogStorage,
  ) {
    this.#latest = db.prepare<[string], string>('SELECT record FROM gate_policy_changes WHERE workspace_id = ? ORDER BY seq DESC LIMIT 1').pluck();
    this.#all = db.prepare<[string], string>('SELECT record FROM gate_policy_changes WHERE workspace_id = ? ORDER BY seq').pluck();
    this.#legacy = db.prepare('SELECT framework, mode, threshold FROM gate_policy WHERE workspace_id = ?');
    this.#insert = db.prepare('INSERT INTO gate_policy_changes (change_id, workspace_id, record) VALUES (?, ?, ?)');
    this.#exists = db.prepare<[string], number>('SELECT 1 FROM workspaces WHERE workspace_id = ?').pluck();
  }

  /** Inside a group's transaction: the latest change, after logging the defaults when there is none, then `edit`'s. */
  #log(workspaceId: string, edit: GatePolicyEdit | null, nowMs: number): GatePolicyChange {
    const text = this.#latest.get(workspaceId);
    let latest = text === undefined ? undefined : storedChange(text);
    latest ??= this.#append(
      workspaceId,
      null,
      { action: 'defaults', changedBy: DEFAULTS_CHANGED_BY, policy: legacyPolicy(this.#legacy.all(workspaceId)) },
      nowMs,
    );
    return edit === null ? latest : this.#append(workspaceId, policyOf(latest), edit, nowMs);
  }

  #append(workspaceId: string, current: GatePolicy | null, edit: GatePolicyEdit, nowMs: number): GatePolicyChange {
    const { record, text, sha256 } = prepareChange(workspaceId, current, edit, nowMs);
    this.#insert.run(record.change_id, workspaceId, text);
    this.ledger.append('gate_policy', record.change_id, workspaceId, record.changed_at, sha256);
    return record;
  }

  #requireWorkspace(workspaceId: string): void {
    if (this.#exists.get(workspaceId) === undefined) throw new Error(`no workspace ${workspaceId}`);
  }

  async change(workspaceId: string, edit: GatePolicyEdit, nowMs: number): Promise<GatePolicyChange | null> {
    if (this.#exists.get(workspaceId) === undefined) return null;
    return this.writer.write(() => this.#log(workspaceId, edit, nowMs));
  }

  async latest(workspaceId: string, nowMs: number): Promise<GatePolicyChange> {
    const text = this.#latest.get(workspaceId);
    if (text !== undefined) return storedChange(text);
    this.#requireWorkspace(workspaceId);
    return this.writer.write(() => this.#log(workspaceId, null, nowMs));
  }

  async changes(workspaceId: string, nowMs: number): Promise<GatePolicyChange[]> {
    await this.latest(workspaceId, nowMs);
    return this.#all.all(workspaceId).map(storedChange);
  }
}
