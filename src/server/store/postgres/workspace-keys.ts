/**
 * Each workspace's small integer key (workspace_keys), remembered once read: a key is given when
 * the workspace is provisioned and never changes or goes away, so a remembered one cannot be stale
 * whichever replica provisioned it. Unknown workspaces are not remembered (provisioning elsewhere
 * may add them at any time).
 */
import type pg from 'pg';

export class WorkspaceKeys {
  readonly #keys = new Map<string, number>();
  readonly #ids = new Map<number, string>();

  constructor(private readonly pool: pg.Pool) {}

  async get(workspaceId: string): Promise<number | undefined> {
    const known = this.#keys.get(workspaceId);
    if (known !== undefined) return known;
    const { rows } = await this.pool.query<{ ws_key: number }>({
      name: 'govctl_ws_key',
      text: 'SELECT ws_key FROM workspace_keys WHERE workspace_id = $1',
      values: [workspaceId],
    });
    const key = rows[0]?.ws_key;
    if (key !== undefined) this.#remember(workspaceId, key);
    return key;
  }

  async idOf(wsKey: number): Promise<string> {
    const known = this.#ids.get(wsKey);
    if (known !== undefined) return known;
    const { rows } = await this.pool.query<{ workspace_id: string }>('SELECT workspace_id FROM workspace_keys WHERE ws_key = $1', [wsKey]);
    if (!rows[0]) throw new Error(`no workspace has key ${wsKey}`);
    this.#remember(rows[0].workspace_id, wsKey);
    return rows[0].workspace_id;
  }

  /** Every workspace's key. */
  async all(): Promise<number[]> {
    const { rows } = await this.pool.query<{ ws_key: number; workspace_id: string }>('SELECT ws_key, workspace_id FROM workspace_keys');
    for (const row of rows) this.#remember(row.workspace_id, row.ws_key);
    return rows.map((row) => row.ws_key);
  }

  #remember(workspaceId: string, key: number): void {
    this.#keys.set(workspaceId, key);
    this.#ids.set(key, workspaceId);
  }
}
