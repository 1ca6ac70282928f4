#!/usr/bin/env node
/**
 * Server CPU time per write: µs of the service process's CPU (user + system, every thread, read
 * with process.cpuUsage() in the server over IPC) per request, and of its main thread alone (the
 * request thread, without V8's helper threads), for a fixed number of requests,
 * this build against an older one (`--base DIR`) in the same run, slices interleaved.
 *
 * Why CPU time and not a rate: on a shared machine the rate moves with whatever else runs, while
 * the CPU a request costs the server barely does. This is the tool for A/B work on the write path;
 * bench/server.mjs stays the one that states the targets.
 *
 *   node bench/write-cost.mjs --base /tmp/base-b4          # evidence, single, batch; 3 rounds
 *   node bench/write-cost.mjs --only evidence --requests 30000 --rounds 5
 *   node bench/write-cost.mjs --cpu-prof                    # profiles of this build's server
 *
 * `--base DIR` is a worktree of another commit, built (`node scripts/build.mjs --no-types`) with
 * node_modules linked. Both builds run through bench/lib/cost-server.mjs (their own startServer,
 * budgets raised to 1e9, the log key created when the build has a log), pinned to core 1, each on a
 * fresh database; autocannon (10 connections) runs here on core 0.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { mkdirSync, writeFileSync } from 'node:fs';
import {
  DIST,
  LIB_DIR,
  RESULTS_DIR,
  SERVER_CPU,
  parseOptions,
  pinLoadGenerator,
  positiveNumber,
  progress,
  requireBuild,
  runDirectory,
  snapshotCode,
  startChild,
  codeRoot,
} from './lib/harness.mjs';
import { Agent, request as httpRequest } from 'node:http';
import { loadProblem, runLoad } from './lib/load.mjs';
import { evidenceBodies, signedAttestations } from './lib/records.mjs';

const USAGE = `node bench/write-cost.mjs [--base DIR] [--only LIST] [--requests N] [--rounds R] [--connections N] [--cpu-prof] [--keep]
  --base DIR     a built worktree of another commit to compare with (default: none, this build alone)
  --only LIST    loads, comma-separated: evidence, single, batch (default all three)
  --requests N   requests per measured slice (default 20000; a batch request holds 100 attestations: N/100 batches)
  --rounds R     measured slices per build and load, interleaved between builds (default 3)
  --steady       a steady autocannon load (10 connections, each sends its next request on an answer)
                 instead of waves of --connections requests (the default; see waves())
  --cpu-prof     node --cpu-prof on each build's server (<run dir>/profiles/<this|base>/); implies --keep
  --keep         keep the run's databases and logs`;

const options = parseOptions(
  {
    base: { type: 'string' },
    steady: { type: 'boolean', default: false },
    only: { type: 'string' },
    requests: { type: 'string' },
    rounds: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
  USAGE,
);
const LOADS = ['evidence', 'single', 'batch'];
const only = options.only === undefined ? LOADS : options.only.split(',').map((s) => s.trim());
for (const name of only) if (!LOADS.includes(name)) throw new Error(`--only: unknown load ${name}`);
const requests = positiveNumber(options.requests, 'requests', 20_000);
const rounds = positiveNumber(options.rounds, 'rounds', 3);
const connections = positiveNumber(options.connections, 'connections', 10);
const BATCH = 100;
const batchRequests = Math.max(10, Math.floor(requests / BATCH));
const warmup = Math.min(3000, requests);

requireBuild(DIST.server, DIST.core, DIST.bin);
pinLoadGenerator(options['no-pin']);
const run = runDirectory('write-cost', options['data-dir']);
if (!options['no-snapshot']) snapshotCode(run.dir, [DIST.server, DIST.core, DIST.bin]);
const builds = [{ label: 'this', code: codeRoot() }];
if (options.base) builds.push({ label: 'base', code: options.base });

/** µs of CPU the server process has used so far (all threads). */
async function serverCpuUs(server) {
  const answer = await server.request({ type: 'cpu' }, 10_000);
  return { all: answer.user + answer.system, main: answer.main ?? null };
}

/**
 * `count` requests in waves: `connections` requests sent at once, the next wave once all are
 * answered. Every wave reaches the service together, so its writes share one group commit
 * whatever else the machine does (with a steady load, a busy machine makes groups smaller and
 * every write dearer, on whichever build happens to run then).
 */
async function waves(target, bodies, firstBody, count) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const url = new URL(target.path, target.url);
  const send = (body) =>
    new Promise((resolve, reject) => {
      const req = httpRequest(
        url,
        { method: 'POST', agent, headers: { ...target.headers, 'content-type': 'application/json', 'content-length': body.length } },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  let next = firstBody;
  let ok = 0;
  let firstBad = null;
  const started = process.hrtime.bigint();
  for (let sent = 0; sent < count;) {
    const wave = [];
    for (let i = 0; i < connections && sent < count; i++, sent++) wave.push(send(bodies[next++ % bodies.length]));
    for (const { status, body } of await Promise.all(wave)) {
      if (status >= 200 && status < 300) ok++;
      else firstBad ??= `${status} ${body.slice(0, 300)}`;
    }
  }
  agent.destroy();
  return { ok, rps: ok / (Number(process.hrtime.bigint() - started) / 1e9), bodiesSent: next - firstBody, problem: firstBad };
}

/** One measured slice: CPU µs and wall time of `count` requests. */
async function slice(server, target, bodies, firstBody, count) {
  const before = await serverCpuUs(server);
  let result;
  if (options.steady) {
    result = await runLoad({ ...target, bodies, firstBody, connections, durationS: 120, maxRequests: count });
    result.problem = loadProblem(result);
  } else result = await waves(target, bodies, firstBody, count);
  const after = await serverCpuUs(server);
  if (result.problem) throw new Error(`${target.path}: ${result.problem}`);
  const mainUs = after.main === null || before.main === null ? null : after.main - before.main;
  return { cpuUs: after.all - before.all, mainUs, requests: result.ok, rps: result.rps, sent: result.bodiesSent };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

const servers = [];
const summary = { requests, rounds, connections, loads: {} };
try {
  for (const build of builds) {
    const profileDir = join(run.dir, 'profiles', build.label);
    const handle = await startChild(join(LIB_DIR, 'cost-server.mjs'), ['--code', build.code, '--db', join(run.dir, `${build.label}.db`)], {
      cpu: SERVER_CPU,
      logFile: join(run.dir, `${build.label}.log`),
      nodeArgs: options['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [],
    });
    // the server answers { type: 'cpu' } with its process.cpuUsage()
    servers.push(handle);
    const core = await import(pathToFileURL(join(build.code, 'dist/lib/core.js')).href);
    const { url, apiKey, workspaceId } = handle.info;
    build.server = handle;
    build.target = { url, headers: { authorization: `Bearer ${apiKey}` } };
    build.prefix = `/api/workspaces/${workspaceId}/governance`;
    build.bodies = {};
    const { key } = core.SigningKey.generate();
    if (only.includes('evidence')) build.bodies.evidence = evidenceBodies(200);
    if (only.includes('single')) {
      progress(`${build.label}: signing ${warmup + requests * rounds + connections * rounds} single attestations`);
      build.bodies.single = signedAttestations(core, key, workspaceId, warmup + (requests + connections) * rounds).map((a) => Buffer.from(JSON.stringify(a)));
    }
    if (only.includes('batch')) {
      const batches = Math.ceil(warmup / BATCH) + (batchRequests + connections) * rounds;
      progress(`${build.label}: signing ${batches * BATCH} attestations for batches`);
      const all = signedAttestations(core, key, workspaceId, batches * BATCH);
      build.bodies.batch = Array.from({ length: batches }, (_, i) => Buffer.from(JSON.stringify({ records: all.slice(i * BATCH, (i + 1) * BATCH) })));
    }
    build.next = { evidence: 0, single: 0, batch: 0 };
  }
  const paths = { evidence: 'grc/evidence', single: 'attestations/external', batch: 'attestations/batch' };
  const perRequest = { evidence: 1, single: 1, batch: BATCH };
  for (const load of only) {
    const count = load === 'batch' ? batchRequests : requests;
    const samples = Object.fromEntries(builds.map((b) => [b.label, []]));
    for (const build of builds) {
      progress(`${load}: warm-up ${build.label}`);
      const target = { ...build.target, path: `${build.prefix}/${paths[load]}` };
      const w = load === 'batch' ? Math.ceil(warmup / BATCH) : warmup;
      const result = await slice(build.server, target, build.bodies[load], build.next[load], w);
      if (load !== 'evidence') build.next[load] += result.sent;
    }
    for (let round = 0; round < rounds; round += 1) {
      const order = round % 2 === 0 ? builds : [...builds].reverse();
      for (const build of order) {
        const target = { ...build.target, path: `${build.prefix}/${paths[load]}` };
        const result = await slice(build.server, target, build.bodies[load], build.next[load], count);
        if (load !== 'evidence') build.next[load] += result.sent;
        const us = result.cpuUs / (result.requests * perRequest[load]);
        const mainUs = result.mainUs === null ? null : result.mainUs / (result.requests * perRequest[load]);
        samples[build.label].push({ us, mainUs, rps: result.rps * perRequest[load] });
        progress(
          `${load} ${build.label} round ${round + 1}: ${us.toFixed(1)} µs server CPU per ${load === 'batch' ? 'attestation' : 'request'}` +
            `${mainUs === null ? '' : `, ${mainUs.toFixed(1)} on its main thread`} (${Math.round(result.rps * perRequest[load])}/s)`,
        );
      }
    }
    const line = { unit: load === 'batch' ? 'µs/attestation' : 'µs/request' };
    for (const build of builds) {
      const us = samples[build.label].map((s) => s.us);
      line[build.label] = {
        median: Math.round(median(us) * 10) / 10,
        min: Math.round(Math.min(...us) * 10) / 10,
        max: Math.round(Math.max(...us) * 10) / 10,
        rate_median: Math.round(median(samples[build.label].map((s) => s.rps))),
        ...(samples[build.label][0].mainUs === null ? {} : { main_thread_median: Math.round(median(samples[build.label].map((s) => s.mainUs)) * 10) / 10 }),
      };
    }
    if (line.base) line.ratio = Math.round((line.this.median / line.base.median) * 1000) / 1000;
    summary.loads[load] = line;
    console.log(
      `${load}: this ${line.this.median} ${line.unit} (${line.this.min}–${line.this.max}; main thread ${line.this.main_thread_median ?? '?'})` +
        (line.base
          ? `, base ${line.base.median} (${line.base.min}–${line.base.max}; main thread ${line.base.main_thread_median ?? '?'}), this/base ${line.ratio}`
          : ''),
    );
  }
} finally {
  for (const server of servers) await server.stop(30_000);
}
mkdirSync(RESULTS_DIR, { recursive: true });
writeFileSync(join(RESULTS_DIR, 'write-cost.json'), `${JSON.stringify(summary, null, 2)}\n`);
console.log(JSON.stringify(summary));
if (!options.keep && !options['cpu-prof']) run.cleanup();
else progress(`run files kept in ${run.dir}`);
