#!/usr/bin/env node
// @ts-check
/**
 * What an abusive client costs the other tenants (docs/security.md, "Abusive clients"): the
 * latency another workspace's `GET /api/me` sees, alone and while
 * 1. 20 connections pipeline 100 requests each for a 1 MB record and never read the replies
 *    (the service's peak RSS is reported too), and
 * 2. one workspace sends signed 1000-attestation batches on 4 connections as fast as it can.
 * Figures, not assertions: latency on a shared 2-core machine is too noisy to assert on.
 *
 *   node bench/abuse.mjs [--seconds S]
 *
 * The service runs with its default limits (`startServer` from dist/, in a child process); every
 * load is bounded in time and targets 127.0.0.1. Build first (`npm run build`).
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DIST, percentile, round } from './lib/harness.mjs';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, child: { type: 'string' } } });

if (values.child !== undefined) {
  // The service under test.
  const server = await import(DIST.server);
  const running = await server.startServer({ host: '127.0.0.1', port: 0, db: values.child });
  process.send?.({ type: 'ready', url: running.url, pid: process.pid });
  process.on('disconnect', () => void running.close().then(() => process.exit(0)));
} else {
  await main();
}

/** @param {number} pid */
function vmHwmMb(pid) {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no VmHWM for process ${pid}`);
  return Number(match[1]) / 1024;
}

/**
 * @param {Agent} agent
 * @param {string} url
 * @param {'GET' | 'POST'} method
 * @param {string} path
 * @param {string} apiKey
 * @param {string} [body]
 * @returns {Promise<{ status: number | undefined, ms: number, text: string }>}
 */
function call(agent, url, method, path, apiKey, body) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      url + path,
      { method, agent, headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) } },
      (res) => {
        /** @type {Buffer[]} */
        const chunks = [];
        res.on('data', (/** @type {Buffer} */ chunk) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Sequential GET /api/me for `ms` (at most 600 requests: within the tenant's 2000 a minute). */
/**
 * @param {string} url
 * @param {string} apiKey
 * @param {number} ms
 * @returns {Promise<Probe>}
 */
async function probe(url, apiKey, ms) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  /** @type {number[]} */
  const latencies = [];
  const end = Date.now() + ms;
  while (Date.now() < end && latencies.length < 600) {
    const reply = await call(agent, url, 'GET', '/api/me', apiKey);
    if (reply.status !== 200) throw new Error(`probe: ${reply.status}`);
    latencies.push(reply.ms);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  agent.destroy();
  return { n: latencies.length, p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)), max: round(Math.max(...latencies)) };
}

/**
 * Latencies another tenant saw, and what the scenario adds about itself.
 * @typedef {{ n: number, p50: number, p99: number, max: number, [figure: string]: number }} Probe
 */

async function main() {
  const seconds = Number(values.seconds);
  const server = await import(DIST.server);
  const core = await import(DIST.core);
  const dir = mkdtempSync(join(tmpdir(), 'govctl-abuse-'));
  const db = join(dir, 'server.db');
  const hog = await server.provision(db, { orgName: 'hog', workspaceName: 'hog' });
  const other = await server.provision(db, { orgName: 'other', workspaceName: 'other' });
  const child = fork(new URL(import.meta.url).pathname, ['--child', db], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  const { url, pid } = await new Promise((resolve) => child.once('message', resolve));
  /** @type {Record<string, Probe>} */
  const results = {};
  try {
    results.alone = await probe(url, other.api_key, seconds * 1000);

    // 1. never-read pipelining of a 1 MB record
    const agent = new Agent({ keepAlive: true });
    const big = {
      record_type: 'change_event',
      system_name: 'big',
      occurred_at: new Date().toISOString(),
      payload: { type: 'deployment', by: 'ci@example.com', description: 'x'.repeat(1_000_000), environment: 'production', system: 'big' },
    };
    const stored = await call(agent, url, 'POST', `/api/workspaces/${hog.workspace_id}/governance/grc/evidence`, hog.api_key, JSON.stringify(big));
    const recordId = JSON.parse(stored.text).record_id;
    const rssBefore = vmHwmMb(pid);
    const get = `GET /api/workspaces/${hog.workspace_id}/governance/grc/evidence/${recordId} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${hog.api_key}\r\n\r\n`;
    const port = Number(new URL(url).port);
    const sockets = Array.from({ length: 20 }, () => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.on('error', () => {});
      socket.pause();
      socket.write(get.repeat(100));
      return socket;
    });
    results.flood = await probe(url, other.api_key, seconds * 1000);
    results.flood.server_peak_rss_mb = round(vmHwmMb(pid));
    results.flood.server_rss_before_mb = round(rssBefore);
    for (const socket of sockets) socket.destroy();

    // 2. 1000-attestation signed batches on 4 connections
    const key = core.SigningKey.fromHex('55'.repeat(32));
    const batches = Array.from({ length: 8 }, (_, b) =>
      JSON.stringify({
        records: Array.from({ length: 1000 }, (_, i) => {
          const record = {
            system_name: 'hog',
            agent_name: 'hog',
            tool_name: `t-${b}-${i}`,
            input_hash: 'a'.repeat(64),
            output_hash: 'b'.repeat(64),
            schema_version: 2,
            executed_at: new Date().toISOString(),
          };
          return { ...record, ...core.signWitness(record, hog.workspace_id, key) };
        }),
      }),
    );
    const end = Date.now() + seconds * 1000;
    let records = 0;
    let limited = 0;
    const hogAgent = new Agent({ keepAlive: true, maxSockets: 4 });
    const loops = Array.from({ length: 4 }, async (_, c) => {
      for (let i = c; Date.now() < end; i += 4) {
        const reply = await call(
          hogAgent,
          url,
          'POST',
          `/api/workspaces/${hog.workspace_id}/governance/attestations/batch`,
          hog.api_key,
          batches[i % batches.length],
        );
        if (reply.status === 200) records += 1000;
        else if (reply.status === 429) limited += 1;
      }
    });
    const started = Date.now();
    results.batches = await probe(url, other.api_key, seconds * 1000);
    await Promise.all(loops);
    hogAgent.destroy();
    results.batches.hog_records_per_minute = Math.round((records / (Date.now() - started)) * 60_000);
    results.batches.hog_429 = limited;
  } finally {
    child.disconnect();
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(JSON.stringify(results, null, 2));
}
