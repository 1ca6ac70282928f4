/**
 * Gate policy per workspace (wire.md §3): a row per framework the workspace has set; every other
 * framework follows core's DEFAULT_GATE_POLICY.
 */
import type Database from 'better-sqlite3';
import { DEFAULT_GATE_POLICY, mergeGatePolicy, type Framework, type GateMode, type GatePolicy, type GateRule } from '../../../core/index.js';
import type { Db } from './database.js';
import type * as Interface from '../store.js';

export class GatePolicyStore implements Interface.GatePolicyStore {
  readonly #set: Database.Statement;
  readonly #clear: Database.Statement;
  readonly #read: Database.Statement<[string], { framework: Framework; mode: GateMode; threshold: number }>;

  constructor(db: Db) {
    this.#set = db.prepare(
      `INSERT INTO gate_policy (workspace_id, framework, mode, threshold, updated_ms) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (workspace_id, framework) DO UPDATE SET mode = excluded.mode, threshold = excluded.threshold, updated_ms = excluded.updated_ms`,
    );
    this.#clear = db.prepare('DELETE FROM gate_policy WHERE workspace_id = ? AND framework = ?');
    this.#read = db.prepare('SELECT framework, mode, threshold FROM gate_policy WHERE workspace_id = ?');
  }

  async set(workspaceId: string, framework: Framework, rule: GateRule, nowMs: number): Promise<void> {
    this.#set.run(workspaceId, framework, rule.mode, rule.threshold, nowMs);
  }

  /** Back to the default for one framework. */
  async clear(workspaceId: string, framework: Framework): Promise<void> {
    this.#clear.run(workspaceId, framework);
  }

  /** The frameworks this workspace has set. */
  async overrides(workspaceId: string): Promise<Partial<Record<Framework, GateRule>>> {
    const out: Partial<Record<Framework, GateRule>> = {};
    for (const row of this.#read.all(workspaceId)) out[row.framework] = { mode: row.mode, threshold: row.threshold };
    return out;
  }

  /** The workspace's whole policy: its own rules over the defaults. */
  async policy(workspaceId: string): Promise<GatePolicy> {
    return mergeGatePolicy(DEFAULT_GATE_POLICY, await this.overrides(workspaceId));
  }
}
