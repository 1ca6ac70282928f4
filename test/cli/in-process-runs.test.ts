/**
 * What makes in-process CLI tests trustworthy (test/helpers/cli.ts `runCli`): a run through
 * `main(argv, {io, env, cwd})` leaves nothing behind in the test process — no signal or crash
 * handler, no timer, no socket, no open file (the embedded store's database is closed) — and reads
 * its environment, home and working directory from what it was given, not from the process.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, runCli } from '../helpers/cli.js';
import { closedPort } from '../helpers/ports.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const WATCHED_EVENTS = ['SIGINT', 'SIGTERM', 'uncaughtException', 'unhandledRejection', 'beforeExit', 'exit'] as const;

interface Footprint {
  listeners: Record<string, number>;
  resources: string[];
  fds: number;
}

function footprint(): Footprint {
  return {
    listeners: Object.fromEntries(WATCHED_EVENTS.map((event) => [event, process.listenerCount(event)])),
    resources: process
      .getActiveResourcesInfo()
      .filter((name) => name !== 'TTYWrap')
      .sort(),
    fds: readdirSync('/proc/self/fd').length,
  };
}

/** What `after` holds beyond `before`: listeners, active resources by kind, file descriptors. */
function added(before: Footprint, after: Footprint): Record<string, number> {
  const extra: Record<string, number> = {};
  for (const event of WATCHED_EVENTS)
    if (after.listeners[event] > before.listeners[event]) extra[`listener ${event}`] = after.listeners[event] - before.listeners[event];
  const count = (names: string[]) => names.reduce<Record<string, number>>((counts, name) => ({ ...counts, [name]: (counts[name] ?? 0) + 1 }), {});
  const [was, now] = [count(before.resources), count(after.resources)];
  for (const [name, n] of Object.entries(now)) if (n > (was[name] ?? 0)) extra[name] = n - (was[name] ?? 0);
  if (after.fds > before.fds) extra.fds = after.fds - before.fds;
  return extra;
}

/** The test server's side of every connection made to it. */
const connections = new Set<Socket>();

function watchConnections(server: TestServer): void {
  server.server.service.app.server.on('connection', (socket: Socket) => void connections.add(socket));
}

/** Two turns of the event loop: a handle closed before is then off the list of active resources. */
async function closeCallbacksRun(): Promise<void> {
  // close callbacks run in the last phase of a turn, after the immediates: the second comes after them
  for (let turn = 0; turn < 2; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * What the runs left behind. A run closes its connections before it returns, so at once every
 * TCP handle beyond the test server's side of its connections is one a run left open; the server's
 * sides then close when their clients' FIN arrives, and are waited for.
 */
async function leftBehind(before: Footprint): Promise<Record<string, number>> {
  await closeCallbacksRun();
  const tcp = (footprint: Footprint) => footprint.resources.filter((name) => name === 'TCPSocketWrap').length;
  const serverSides = [...connections].filter((socket) => !socket.closed);
  const openByRuns = tcp(footprint()) - tcp(before) - serverSides.length;
  if (openByRuns > 0) return { ...added(before, footprint()), 'sockets left open by the runs': openByRuns };
  const closing = serverSides.filter((socket) => !socket.closed).map((socket) => new Promise((resolve) => socket.once('close', resolve)));
  await Promise.all(closing);
  connections.clear();
  await closeCallbacksRun();
  return added(before, footprint());
}

let server: TestServer;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({ rateLimitPerMinute: 1_000_000 });
  watchConnections(server);
  env = { SERVICE_BASE_URL: server.url, SERVICE_API_KEY: server.apiKey };
  // Warm up: modules loaded once (and their one-time handles) are not a run's leftovers.
  await runCli(['whoami'], { env });
  await runCli(['evidence', 'list', '--base-url', 'local']);
});

afterAll(async () => {
  await server?.stop();
});

const change = (system: string) =>
  JSON.stringify({
    record_type: 'change_event',
    system_name: system,
    payload: { type: 'deployment', by: 'ci@example.com', description: 'v2', environment: 'production', system },
  });

describe('an in-process run', () => {
  it('leaves no handler, timer, socket or open file behind: remote, embedded store, serve and failures', async () => {
    connections.clear(); // the warm-up's
    const before = footprint();
    const home = makeHome();
    expect((await runCli(['evidence', 'import', '-', '--base-url', 'local'], { home, input: change('leaks') })).exitCode).toBe(0);
    expect((await runCli(['evidence', 'list', '--base-url', 'local', '--json'], { home })).exitCode).toBe(0);
    expect((await runCli(['posture', '-v'], { env })).exitCode).toBe(0);
    expect((await runCli(['evidence', 'import', '-'], { env, input: change('leaks') })).exitCode).toBe(0);
    expect((await runCli(['whoami'], { env: { ...env, SERVICE_API_KEY: 'gk_not_a_real_key_123456' } })).exitCode).toBe(77);
    expect((await runCli(['evidence', 'list', '--bogus'])).exitCode).toBe(64);
    // `serve` on a port that is taken fails before it listens (and before it installs its handlers).
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((taken.address() as { port: number }).port);
      expect((await runCli(['serve', '--port', port, '--db', join(home, 'served.db')])).exitCode).toBe(78);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    expect(await leftBehind(before)).toEqual({});
  });

  it('reads HOME, the working directory and the proxy settings it was given, not the process', async () => {
    const home = makeHome();
    writeFileSync(join(home, 'api.key'), `${server.apiKey}\n`, { mode: 0o600 });
    writeFileSync(join(home, 'records.ndjson'), change('given-cwd'));
    // `~/` in a config file is the run's HOME; a relative input file is the run's working directory.
    writeFileSync(join(home, '.govctlrc.json'), JSON.stringify({ baseUrl: server.url, apiKeyFile: '~/api.key' }));
    const imported = await runCli(['evidence', 'import', 'records.ndjson'], { home });
    expect(imported.exitCode, imported.stderr).toBe(0);
    // A proxy in the run's environment is used (here: one that refuses everything, so the run fails).
    const proxy = `http://127.0.0.1:${await closedPort()}`;
    const proxied = await runCli(['whoami'], { env: { ...env, HTTP_PROXY: proxy, NO_PROXY: '' } });
    expect(proxied.exitCode).toBe(69);
    // -v says a proxy is in the way, so that an error naming the proxy's address is not read as the service's
    const traced = await runCli(['whoami', '-v'], { env: { ...env, HTTP_PROXY: `http://user:secret@${proxy.slice(7)}`, NO_PROXY: '' } });
    expect(traced.exitCode).toBe(69);
    expect(traced.stderr).toContain(`proxy: HTTP_PROXY=http://***@${proxy.slice(7)}; requests go through it (NO_PROXY is not set)`);
    expect(traced.stderr).not.toContain('secret');
  });
});
