// @ts-check
/**
 * A service process for bench/write-cost.mjs: `startServer` of the build in `--code DIR` (this
 * tree's snapshot, or an older build's worktree, which need not have `govctl serve`'s newer flags)
 * on 127.0.0.1, an ephemeral port and `--db FILE`, logging one JSON line per request through the
 * build's own log writer to stderr, as `govctl serve` does. The per-workspace budgets are raised
 * to 1e9 (their hooks still run on every request). When the build has a transparency log, its
 * key is created beside the database and checkpoints are signed, as under `govctl serve`.
 *
 * IPC: `{ type: 'ready', url, pid, apiKey, workspaceId }`; `{ type: 'cpu' }` is answered with
 * `{ type: 'cpu', user, system, main }`, the process's CPU so far (µs, every thread: process.cpuUsage())
 * and its main thread's (µs, from /proc); stops on SIGTERM or when the parent goes.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    code: { type: 'string' },
    db: { type: 'string' },
  },
});

/** µs of CPU the main thread has used so far (user + system; Linux, else null): the request thread alone, without workers or GC helpers. */
function mainThreadCpuUs() {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime are fields 14 and 15 of the line, in clock ticks (100 a second on Linux)
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

try {
  const server = await import(pathToFileURL(join(String(values.code), 'dist/lib/server.js')).href);
  const dbPath = values.db;
  const identityFile = `${dbPath}.identity.json`;
  let identity;
  if (existsSync(identityFile)) identity = JSON.parse(readFileSync(identityFile, 'utf8'));
  else {
    // await: provision returns a promise since the Store interface (an older build's returns the value)
    identity = await server.provision(dbPath, { orgName: 'bench', workspaceName: 'bench', userEmail: 'bench@example.com' });
    writeFileSync(identityFile, JSON.stringify(identity), { mode: 0o600 });
  }
  let ledger;
  if (typeof server.createLedgerKey === 'function') {
    const keyFile = server.ledgerKeyPath(dbPath);
    if (!existsSync(keyFile)) server.createLedgerKey(keyFile);
    ledger = { key: server.readLedgerKey(keyFile) };
  }
  const log = server.createLogWriter((/** @type {string} */ text) => process.stderr.write(text));
  const running = await server.startServer({
    host: '127.0.0.1',
    port: 0,
    db: dbPath,
    logLine: log.line,
    rateLimitPerMinute: 1e9,
    limits: { requestsPerMinute: 1e9, recordsPerMinute: 1e9 },
    ...(ledger ? { ledger } : {}),
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    running.close().then(
      () => {
        log.flush?.();
        process.exit(0);
      },
      (/** @type {unknown} */ error) => {
        process.stderr.write(`close failed: ${error instanceof Error ? error.stack : String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('disconnect', stop);
  process.on('message', (/** @type {{ type?: string } | null} */ message) => {
    if (message?.type === 'cpu') process.send?.({ type: 'cpu', ...process.cpuUsage(), main: mainThreadCpuUs() });
  });
  process.send?.({ type: 'ready', url: running.url, pid: process.pid, apiKey: identity.api_key, workspaceId: identity.workspace_id });
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
  process.send?.({ type: 'error', message: error instanceof Error ? error.message : String(error) }, () => process.disconnect());
}
