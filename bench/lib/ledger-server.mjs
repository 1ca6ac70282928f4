/**
 * The service under test for bench/ledger.mjs, as a child process: govctl's `startServer` with a
 * log key beside the database and the log integrated on its timer (`--integration timer`, what
 * `govctl serve` runs) or not at all (`--integration manual`, the baseline). `--seed-leaves N`
 * first appends N synthetic leaves to the workspace's log and integrates them (for the read
 * latencies with a large tree). IPC: `{ type: 'ready', url, pid, apiKey, workspaceId, ids }`
 * (`ids`: a sample of seeded leaf ids). Stops gracefully on SIGTERM or when the parent goes away.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { DIST } from './harness.mjs';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    integration: { type: 'string', default: 'timer' },
    'seed-leaves': { type: 'string', default: '0' },
  },
});

try {
  const server = await import(DIST.server);
  const dbPath = values.db;
  const identity = await server.provision(dbPath, { orgName: 'bench', workspaceName: 'bench' });
  const keyFile = server.ledgerKeyPath(dbPath);
  if (!existsSync(keyFile)) server.createLedgerKey(keyFile);
  const seed = Number(values['seed-leaves']);
  const ids = [];
  if (seed > 0) {
    // Synthetic leaves written straight into the (provisioned, migrated) file before the service
    // opens it; the service integrates them below, as it would a backlog.
    const Database = createRequire(import.meta.url)('better-sqlite3');
    const db = new Database(dbPath);
    const wsKey = db.prepare('SELECT ws_key FROM workspace_keys WHERE workspace_id = ?').pluck().get(identity.workspace_id);
    // A leaf's rowid is (ws_key << 40) + leaf_index (schema 9; the table's CHECK enforces it).
    const insert = db.prepare('INSERT INTO ledger_leaves (leaf_key, ws_key, leaf_index, kind, record_id, entry) VALUES ((? << 40) + ?, ?, ?, ?, ?, ?)');
    // after the leaves provisioning logged (the workspace's gate policy)
    const first = db.prepare('SELECT count(*) FROM ledger_leaves WHERE ws_key = ?').pluck().get(wsKey);
    db.transaction(() => {
      for (let i = first; i < first + seed; i++) {
        const id = `rec_seed_${i}`;
        const entry = `{"id":"${id}","kind":"evidence","received_at":"2026-11-23T09:00:00.000Z","sha256":"${String(i).padStart(64, '0')}","workspace_id":"${identity.workspace_id}"}`;
        insert.run(wsKey, i, wsKey, i, 'evidence', id, Buffer.from(entry));
      }
    })();
    db.close();
    for (let i = 0; i < 1000; i++) ids.push(`rec_seed_${first + Math.floor(Math.random() * seed)}`);
  }
  const running = await server.startServer({
    host: '127.0.0.1',
    port: 0,
    db: dbPath,
    rateLimitPerMinute: 1e9,
    verifyWorkers: 0,
    ledger: { key: server.readLedgerKey(keyFile), integration: values.integration },
  });
  const started = Date.now();
  const integrated = seed > 0 ? await running.service.store.ledger.integrate() : 0;
  const integrationMs = Date.now() - started;
  const stop = () =>
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  process.on('SIGTERM', stop);
  process.on('disconnect', stop);
  process.send({
    type: 'ready',
    url: running.url,
    pid: process.pid,
    apiKey: identity.api_key,
    workspaceId: identity.workspace_id,
    ids,
    integrated,
    integrationMs,
  });
} catch (error) {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exitCode = 1;
  process.send?.({ type: 'error', message: String(error?.message ?? error) }, () => process.disconnect());
}
