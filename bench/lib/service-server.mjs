/**
 * The service under test, as a child process (startChild): govctl's own `startServer` (what
 * `govctl serve` runs) on 127.0.0.1, an ephemeral port and the given SQLite file, logging one JSON
 * line per request to stderr as `govctl serve` does (the parent points stderr at a log file).
 *
 * The database is provisioned with govctl's `provision` on first use; the identity (API key,
 * workspace id) is kept beside it in `<db>.identity.json` so that a restart on the same file
 * (after seeding) uses the same key.
 *
 * The per-workspace rate limit (2000 requests a minute by default, spec §8) is raised with
 * `--rate-limit` (default here: 1e9), and the record budget with it: a load test measures the cost
 * of serving a request, and the limit's hook and the record charge still run on every request.
 *
 * IPC: `{ type: 'ready', url, pid, apiKey, workspaceId, dbPath }`. Stops (gracefully, committing
 * queued writes) on SIGTERM or when the parent goes away. `{ type: 'profile-start' }` and
 * `{ type: 'profile-stop', file }` take a CPU profile of one phase (node:inspector, in-process),
 * answered with `{ type: 'profile', file }`.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { DIST } from './harness.mjs';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    'rate-limit': { type: 'string', default: '1000000000' },
    'verify-workers': { type: 'string' },
    quiet: { type: 'boolean', default: false },
  },
});

try {
  const server = await import(DIST.server);
  const dbPath = values.db;
  const identityFile = `${dbPath}.identity.json`;
  let identity;
  if (existsSync(identityFile)) identity = JSON.parse(readFileSync(identityFile, 'utf8'));
  else {
    identity = server.provision(dbPath, { orgName: 'bench', workspaceName: 'bench', userEmail: 'bench@example.com' });
    writeFileSync(identityFile, JSON.stringify(identity), { mode: 0o600 });
  }
  // As `govctl serve` writes its log: through the service's own log writer (lines gathered and
  // written at most every LOG_FLUSH_MS while they keep coming), not one write(2) per line.
  const log = server.createLogWriter((text) => process.stderr.write(text));
  const logLine = values.quiet ? () => {} : log.line;
  const running = await server.startServer({ host: '127.0.0.1', port: 0, db: dbPath, logLine, rateLimitPerMinute: Number(values['rate-limit']), limits: { recordsPerMinute: Number(values['rate-limit']) }, ...(values['verify-workers'] !== undefined ? { verifyWorkers: Number(values['verify-workers']) } : {}) });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    running.close().then(
      () => {
        log.flush();
        process.exit(0);
      },
      (error) => {
        process.stderr.write(`close failed: ${error?.stack ?? error}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('disconnect', stop);
  let session = null;
  process.on('message', (message) => {
    const answer = (body) => process.send(body);
    const fail = (error) => answer({ type: 'error', message: String(error?.message ?? error) });
    if (message?.type === 'profile-start') {
      session = new Session();
      session.connect();
      session.post('Profiler.enable', () =>
        session.post('Profiler.setSamplingInterval', { interval: 200 }, () =>
          session.post('Profiler.start', (error) => (error ? fail(error) : answer({ type: 'profiling' }))),
        ),
      );
    } else if (message?.type === 'profile-stop' && session) {
      session.post('Profiler.stop', (error, result) => {
        if (error) return fail(error);
        mkdirSync(dirname(message.file), { recursive: true });
        writeFileSync(message.file, JSON.stringify(result.profile));
        session.disconnect();
        session = null;
        answer({ type: 'profile', file: message.file });
      });
    }
  });
  process.send({ type: 'ready', url: running.url, pid: process.pid, apiKey: identity.api_key, workspaceId: identity.workspace_id, dbPath });
} catch (error) {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exitCode = 1;
  process.send?.({ type: 'error', message: String(error?.message ?? error) }, () => process.disconnect());
}
