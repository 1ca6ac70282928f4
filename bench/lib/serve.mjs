/**
 * The service under test: the real `govctl serve` (`node bin/govctl.js serve`), spawned on
 * 127.0.0.1 and an ephemeral port over the given SQLite file, pinned with taskset like every
 * child of the benchmarks, its stderr (the listening line, then one JSON log line per request)
 * going to a log file.
 *
 * The database is provisioned with `govctl admin init` on first use; the identity (API key,
 * workspace id) is kept beside it in `<db>.identity.json` so that a restart on the same file
 * (after seeding) uses the same key.
 *
 * The per-workspace budgets (2000 requests and the record budget a minute by default, docs/service.md "Limits")
 * are raised with `--requests-per-minute` and `--records-per-minute` to 1e9: a load test measures
 * the cost of serving a request, and the limit's hook and the record charge still run on every
 * request.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { DIST, isPinned } from './harness.mjs';

const UNLIMITED = '1000000000';

/**
 * Starts `govctl serve` and resolves once it listens.
 * `db` may be a postgres:// URL: then `identityFile` says where to keep the identity and
 * `logKey` is the log's key file (every replica of one database is given the same).
 * @param {{ db: string, cpu?: number|string, logFile: string, verifyWorkers?: string, nodeArgs?: string[], timeoutMs?: number, identityFile?: string, logKey?: string }} options
 * @returns {Promise<{ pid: number, info: { url: string, apiKey: string, workspaceId: string, dbPath: string }, stop(graceMs?: number): Promise<{ code: number|null, signal: string|null }> }>}
 */
export async function startServe({ db, cpu, logFile, verifyWorkers, nodeArgs = [], timeoutMs = 60_000, identityFile, logKey }) {
  const keyArgs = logKey !== undefined ? ['--log-key', logKey] : [];
  const identity = provisioned(db, identityFile ?? `${db}.identity.json`, keyArgs);
  const command = [
    process.execPath,
    ...nodeArgs,
    DIST.bin,
    'serve',
    '--port',
    '0',
    '--db',
    db,
    '--requests-per-minute',
    UNLIMITED,
    '--records-per-minute',
    UNLIMITED,
    ...(verifyWorkers !== undefined ? ['--verify-workers', String(verifyWorkers)] : []),
    ...keyArgs,
  ];
  const argv = isPinned() && cpu !== undefined ? ['taskset', '-c', String(cpu), ...command] : command;
  // Only what govctl needs: no inherited SERVICE_* or GOVCTL_* setting changes what it does.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8', NO_COLOR: '1' };
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'], env });
  const log = createWriteStream(logFile, { flags: 'a' });
  const exited = once(child, 'exit');
  let head = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`govctl serve did not listen within ${timeoutMs} ms; see ${logFile}`)), timeoutMs);
    const onData = (chunk) => {
      head += chunk.toString('utf8');
      const match = /govctl: listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(head);
      if (match) {
        clearTimeout(timer);
        child.stderr.off('data', onData);
        resolve(match[1]);
      }
    };
    child.stderr.on('data', onData);
    void exited.then(([code, signal]) => {
      clearTimeout(timer);
      reject(new Error(`govctl serve exited (${signal ?? code}) before listening: ${head.slice(0, 2000)}`));
    });
  }).catch((error) => {
    child.kill('SIGKILL');
    throw error;
  });
  // What was read while waiting goes to the log too, then the rest as it comes.
  log.write(head);
  child.stderr.pipe(log);
  return {
    // With taskset the pid is node's: taskset execs it.
    pid: child.pid,
    info: { url, apiKey: identity.api_key, workspaceId: identity.workspace_id, dbPath: db },
    /** SIGTERM (the graceful shutdown: queued writes commit), then SIGKILL after `graceMs` */
    async stop(graceMs = 10_000) {
      if (child.exitCode === null && child.signalCode === null) {
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        child.kill('SIGTERM');
        await exited;
        clearTimeout(timer);
      }
      return { code: child.exitCode, signal: child.signalCode };
    },
  };
}

/** The identity of the database, provisioned with `govctl admin init` the first time. */
function provisioned(db, file, keyArgs) {
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  const init = spawnSync(process.execPath, [DIST.bin, 'admin', 'init', '--db', db, '--json', ...keyArgs], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8' },
  });
  if (init.status !== 0) throw new Error(`govctl admin init --db ${db} failed (exit ${init.status}): ${init.stderr}`);
  const identity = JSON.parse(init.stdout);
  writeFileSync(file, JSON.stringify(identity), { mode: 0o600 });
  return identity;
}
