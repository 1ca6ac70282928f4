/**
 * Control coverage per workspace: when each control was last earned (docs/controls.md). Updated as
 * records arrive, read whole (one row per control, a few dozen) for posture and gates, so that
 * no request scans evidence.
 */
import type Database from 'better-sqlite3';
import type { Db } from './database.js';

export class CoverageStore {
  readonly #earn: Database.Statement;
  readonly #read: Database.Statement<[string], { control_id: string; last_earned_ms: number }>;

  constructor(db: Db) {
    this.#earn = db.prepare(
      `INSERT INTO control_coverage (workspace_id, control_id, last_earned_ms) VALUES (?, ?, ?)
       ON CONFLICT (workspace_id, control_id) DO UPDATE SET last_earned_ms = max(last_earned_ms, excluded.last_earned_ms)`,
    );
    this.#read = db.prepare('SELECT control_id, last_earned_ms FROM control_coverage WHERE workspace_id = ?');
  }

  /**
   * Collects what a group of writes earned, to be written once per control by {@link flush}:
   * the latest time per control is exactly what one upsert per record would leave.
   */
  #pending = new Map<string, Map<string, number>>();

  /** Notes that `controls` were earned at `earnedMs`; written by the next {@link flush}. */
  defer(workspaceId: string, controls: readonly string[], earnedMs: number): void {
    let earned = this.#pending.get(workspaceId);
    if (!earned) {
      earned = new Map();
      this.#pending.set(workspaceId, earned);
    }
    for (const control of controls) {
      const previous = earned.get(control);
      if (previous === undefined || earnedMs > previous) earned.set(control, earnedMs);
    }
  }

  /** Forgets what was deferred (a new attempt at a group). */
  discard(): void {
    this.#pending.clear();
  }

  /** Writes what was deferred since the last flush or discard. */
  flush(): void {
    for (const [workspaceId, earned] of this.#pending) {
      for (const [control, ms] of earned) this.#earn.run(workspaceId, control, ms);
    }
    this.#pending.clear();
  }

  /** control id → epoch ms it was last earned, for the scoring in core/controls. */
  lastEarned(workspaceId: string): Map<string, number> {
    return new Map(this.#read.all(workspaceId).map((row) => [row.control_id, row.last_earned_ms]));
  }
}
