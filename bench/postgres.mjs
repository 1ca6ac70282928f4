#!/usr/bin/env node
/**
 * The PostgreSQL backend against SQLite, in the same run (issue 15), and two replicas on one
 * PostgreSQL database with each process's CPU per request.
 *
 *   node bench/postgres.mjs [--quick] [--duration S] [--connections N] [--saturating-connections N] [--no-pin] [--keep]
 *   node bench/postgres.mjs --quick --only evidence --cpu-prof   # iteration: part 1's evidence POST, profiled
 *
 * Parts:
 * 1. One `govctl serve` on a SQLite file vs one `govctl serve --db postgres://…` (one replica), the
 *    same loads alternated slice by slice: evidence POST (the result: PostgreSQL ≥ 0.5 × SQLite),
 *    signed single attestations and batches of 100 (figures and ratios). The service side gets the
 *    same CPU on both: `govctl serve` AND PostgreSQL pinned to core 1 (SQLite runs inside the
 *    service process), autocannon on core 0.
 *    A rate is what a service sustains at full load, so the result is measured with enough clients
 *    to keep each service's core busy (--saturating-connections, default 160; each figure says how
 *    many cores the service side used, and a run that did not saturate both says so). The same
 *    load with few clients (--connections, default 10) is reported beside it: there a PostgreSQL
 *    replica is bound by its round trips' latency, not by CPU.
 * 2. Two replicas on the PostgreSQL database, nothing pinned (two replicas, PostgreSQL and the load
 *    generator share the 2 cores), each with --saturating-connections clients: the total evidence
 *    POST rate over two workspaces, each replica taking writes of both, and each process's CPU per
 *    request: each replica's, and PostgreSQL's (the postmaster with its children, live and reaped,
 *    from /proc). docs/deploy.md projects from
 *    these how many replicas a PostgreSQL of a given size can feed.
 *
 * The PostgreSQL cluster is the tests' throw-away one (test/helpers/postgres-cluster.mjs: fsync and
 * synchronous_commit on, 127.0.0.1), in this run's directory. Loads are bounded in time and count.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DIST,
  LOAD_CPU,
  Report,
  SERVER_CPU,
  cpuSecondsOf,
  machineBusySeconds,
  parseOptions,
  pinLoadGenerator,
  positiveNumber,
  progress,
  requireBuild,
  round,
  runDirectory,
  snapshotCode,
  waitForQuiet,
} from './lib/harness.mjs';
import { loadDetails, loadProblem, mergeLoads, runLoad } from './lib/load.mjs';
import { evidenceBodies, signedAttestations } from './lib/records.mjs';
import { startServe } from './lib/serve.mjs';

const USAGE = `node bench/postgres.mjs [--quick] [--duration S] [--slices N] [--connections N] [--saturating-connections N] [--data-dir DIR] [--no-pin] [--keep]
  --quick        short smoke run: 2 s per slice, one slice per target
  --duration S   seconds per load and target (default 8, quick 2), in --slices alternated slices
  --slices N     slices each load's duration is cut into, alternated between the targets (default 4, quick 1)
  --connections  autocannon connections per target with few clients (default 10; two replicas: this many per replica)
  --saturating-connections N
                 connections for the evidence POST result, enough to keep each service's core busy (default 160)
  --data-dir DIR where databases, the cluster and logs go (default .bench-data/)
  --no-pin       do not pin processes to cores with taskset
  --no-snapshot  load the code from dist/ in place (default: a copy in the run directory, safe from rebuilds)
  --keep         keep this run's databases and logs
  --quiet-wait S before each load, wait up to S seconds for other processes to go quiet (default 120; 0: never)
  --only evidence  part 1's evidence POST alone (iteration, not a result: no attestations, no replicas)
  --socket       the services reach PostgreSQL through its Unix socket, not TCP on 127.0.0.1 (a replica on the database's machine)
  --cpu-prof     a CPU profile of each part-1 service process (node --cpu-prof) in the run's profiles/ (kept)
  --statements   PostgreSQL's time per statement during part 1's evidence POST (pg_stat_statements, loaded for
                 the run: it costs some of PostgreSQL's CPU, so the rates of such a run are not results)`;

const options = parseOptions(
  {
    slices: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'saturating-connections': { type: 'string' },
    'quiet-wait': { type: 'string' },
    only: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    socket: { type: 'boolean', default: false },
    statements: { type: 'boolean', default: false },
  },
  USAGE,
);
if (options.only !== undefined && options.only !== 'evidence') throw new Error(`--only takes evidence, not ${options.only}`);
const evidenceOnly = options.only === 'evidence';
const quick = options.quick;
const durationS = positiveNumber(options.duration, 'duration', quick ? 2 : 8);
const connections = positiveNumber(options.connections, 'connections', 10);
const saturatingConnections = positiveNumber(options['saturating-connections'], 'saturating-connections', 160);
/** The service side's CPU (cores) at or above which a pinned run counts as saturated. */
const SATURATED = 0.9;
const quietWaitS = options['quiet-wait'] === undefined ? 120 : Number(options['quiet-wait']);
// Alternated slices: this machine's speed moves by a fifth within seconds and by 3x within an hour,
// so each target's figure is the sum of several short slices taken in turn with the other's.
const rounds = positiveNumber(options.slices, 'slices', quick ? 1 : 4);
if (!Number.isInteger(rounds)) throw new Error(`--slices takes a whole number, not ${options.slices}`);
const sliceS = durationS / rounds;
const warmupS = quick ? 1 : 2;
const maxRequests = 1_000_000;
const BATCH = 100;
/** Other processes' CPU during a measurement, in cores; above this the figure is flagged as noisy. */
const NOISY = 0.25;

requireBuild(DIST.server, DIST.core, DIST.cli, DIST.bin);
const run = runDirectory('postgres', options['data-dir']);
if (!options['no-snapshot']) snapshotCode(run.dir, [DIST.server, DIST.core, DIST.cli, DIST.bin]);
// The cluster goes in the run directory (the same file system as the SQLite file). It is started
// before this process pins itself to the load core, so that it does not inherit that core.
process.env.TMPDIR = run.dir;
const { startCluster } = await import('../test/helpers/postgres-cluster.mjs');
progress('starting a throw-away PostgreSQL cluster');
const STATEMENT_SETTINGS = { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all', 'pg_stat_statements.track_planning': 'on' };
const cluster = await startCluster(options.statements ? { settings: STATEMENT_SETTINGS } : {});
const pinned = pinLoadGenerator(options['no-pin']);
const report = new Report('postgres', {
  quick,
  duration_s: durationS,
  connections,
  saturating_connections: saturatingConnections,
  data_dir: run.dir,
  postgres: postgresVersion(),
  postgres_connection: options.socket ? 'unix socket' : 'tcp 127.0.0.1',
  layout: pinned ? 'part 1: govctl serve and PostgreSQL on core 1, autocannon on core 0 (taskset); part 2 (two replicas): nothing pinned' : 'not pinned',
});
const core = await import(DIST.core);
const services = [];
let exitCode = 1;
/** Thrown after part 1's evidence POST under --only evidence. */
class StopAfterEvidence extends Error {}

function postgresVersion() {
  try {
    return execFileSync(join(cluster.bin, 'postgres'), ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL's processes: pinning and CPU

/** The postmaster's live children (backends and auxiliary processes). */
function postgresChildren() {
  try {
    return execFileSync('pgrep', ['-P', String(cluster.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** Pins the postmaster and its children to `cpus` (backends it forks later inherit the postmaster's). */
function pinPostgres(cpus) {
  if (!pinned) return;
  for (const pid of [cluster.pid, ...postgresChildren()]) spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/**
 * CPU seconds PostgreSQL has used so far: the postmaster's own and its reaped children's
 * (cutime + cstime: a backend that ended), plus each live child's own.
 */
function postgresCpuSeconds() {
  const stat = readFileSync(`/proc/${cluster.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const own = (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
  return own + postgresChildren().reduce((sum, pid) => sum + (cpuSecondsOf(pid) ?? 0), 0);
}

/**
 * Runs `measure` and returns its result with the CPU seconds of each named process (`pids`, and
 * `postgres` when asked) and of the load generator (this process), the wall time, and the CPU
 * every other process on the machine used (cores).
 */
async function withCpu(pids, withPostgres, measure) {
  const before = {
    machine: machineBusySeconds(),
    self: process.cpuUsage(),
    pids: Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSecondsOf(pid)])),
    pg: withPostgres ? postgresCpuSeconds() : 0,
  };
  const t0 = process.hrtime.bigint();
  const result = await measure();
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  const self = process.cpuUsage(before.self);
  const cpu = { load_generator: (self.user + self.system) / 1e6 };
  for (const [k, pid] of Object.entries(pids)) cpu[k] = (cpuSecondsOf(pid) ?? before.pids[k]) - before.pids[k];
  if (withPostgres) cpu.postgres = postgresCpuSeconds() - before.pg;
  const machine = machineBusySeconds();
  const ours = Object.values(cpu).reduce((a, b) => a + b, 0);
  const otherCores = before.machine === null || machine === null ? null : Math.max(0, (machine - before.machine - ours) / wallS);
  return { result, cpu, wallS, otherCores };
}

async function quiet() {
  if (quietWaitS > 0) await waitForQuiet({ maxWaitS: quietWaitS });
}

// ---------------------------------------------------------------------------------------------
// Services

async function startService(label, db, { cpu, logKey, identityFile, profile = false } = {}) {
  const handle = await startServe({
    db,
    ...(profile ? { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', join(run.dir, 'profiles', label)] } : {}),
    ...(cpu !== undefined ? { cpu } : {}),
    logFile: join(run.dir, `${label}.log`),
    ...(logKey !== undefined ? { logKey } : {}),
    ...(identityFile !== undefined ? { identityFile } : {}),
  });
  services.push(handle);
  return { ...handle.info, pid: handle.pid, handle };
}

/**
 * A load against two targets (SQLite's service and PostgreSQL's), warm-ups first, then `rounds`
 * slices alternated so that a drift of the machine's speed hits both alike; each target's slices
 * merged, with the CPU of its processes over them. `shape.connections`: clients per target (default --connections).
 */
async function compare(label, targets, shape) {
  const clients = shape.connections ?? connections;
  for (const target of targets) {
    await quiet();
    progress(`${label}: warm-up ${target.name} (${warmupS} s)`);
    await runLoad({ ...target.load, bodies: target.warmupBodies ?? target.bodies, connections: clients, durationS: warmupS, maxRequests });
  }
  const slices = Object.fromEntries(targets.map((t) => [t.name, []]));
  const next = Object.fromEntries(targets.map((t) => [t.name, 0]));
  for (let round_ = 0; round_ < rounds; round_ += 1) {
    for (const target of targets) {
      await quiet();
      progress(`${label}: ${target.name}${rounds > 1 ? ` slice ${round_ + 1}/${rounds}` : ''} for ${sliceS} s, ${clients} connections`);
      // bodies that may reach the service once only (signed attestations) are shared out
      const cap = shape.once ? Math.min(Math.floor(target.bodies.length / rounds), target.bodies.length - next[target.name] - clients) : maxRequests;
      const measured = await withCpu({ service: target.pid }, target.postgres, () =>
        runLoad({
          ...target.load,
          bodies: target.bodies,
          firstBody: shape.once ? next[target.name] : 0,
          connections: clients,
          durationS: sliceS,
          maxRequests: cap,
        }),
      );
      if (shape.once) next[target.name] += measured.result.bodiesSent;
      slices[target.name].push(measured);
    }
  }
  const out = {};
  for (const target of targets) {
    const parts = slices[target.name];
    const merged = mergeLoads(parts.map((p) => p.result));
    const cpu = {};
    for (const part of parts) for (const [k, v] of Object.entries(part.cpu)) cpu[k] = (cpu[k] ?? 0) + v;
    const wallS = parts.reduce((a, p) => a + p.wallS, 0);
    const other = parts.some((p) => p.otherCores === null) ? null : parts.reduce((a, p) => a + p.otherCores * p.wallS, 0) / wallS;
    out[target.name] = { load: merged, cpu, wallS, otherCores: other };
    if (other !== null && other > NOISY)
      report.note(`${label} (${target.name}): other processes used ${other.toFixed(2)} cores during the run; the figure is noisy`);
  }
  return out;
}

/** CPU milliseconds per request of each process in `measured`. */
function cpuPerRequest(measured, requests) {
  return Object.fromEntries(Object.entries(measured.cpu).map(([k, v]) => [k, round((v * 1000) / requests, 3)]));
}

function cpuDetails(measured, requests) {
  return {
    cpu_ms_per_request: cpuPerRequest(measured, requests),
    cpu_cores: Object.fromEntries(Object.entries(measured.cpu).map(([k, v]) => [k, round(v / measured.wallS, 2)])),
    other_cpu: measured.otherCores === null ? null : round(measured.otherCores, 2),
  };
}

/** The cores the service side (the service, and PostgreSQL when it is one) used over a run. */
function serviceCores(measured) {
  return (measured.cpu.service + (measured.cpu.postgres ?? 0)) / measured.wallS;
}

/**
 * A PostgreSQL figure against SQLite's: both rates as figures, the ratio, CPU per request.
 * `saturation`: the result is a capacity, so each service side must have kept its core busy.
 */
function reportPair(name, runs, unit, per = 1, target, { saturation = false } = {}) {
  const sqlite = runs.sqlite;
  const pg = runs.postgres;
  const problem = loadProblem(pg.load) ?? loadProblem(sqlite.load);
  report.figure(`sqlite_${name}`, sqlite.load.rps * per, unit, {
    ...loadDetails(sqlite.load),
    ...cpuDetails(sqlite, sqlite.load.ok * per),
    note: `service ${cpuPerRequest(sqlite, sqlite.load.ok * per).service} ms CPU per ${per > 1 ? 'item' : 'request'}`,
  });
  if (problem) {
    report.failed(`postgres_${name}`, problem);
    return;
  }
  const pgCpu = cpuPerRequest(pg, pg.load.ok * per);
  if (saturation) {
    const idle = ['sqlite', 'postgres'].filter((k) => serviceCores(runs[k]) < SATURATED).map((k) => `${k} ${serviceCores(runs[k]).toFixed(2)}`);
    if (idle.length > 0)
      report.note(
        `${name}: not saturated (service side cores: ${idle.join(', ')}, below ${SATURATED}): the ratio is not one of capacities; raise --saturating-connections`,
      );
  }
  const details = {
    postgres: { ...loadDetails(pg.load), ...cpuDetails(pg, pg.load.ok * per) },
    sqlite: { ...loadDetails(sqlite.load), ...cpuDetails(sqlite, sqlite.load.ok * per) },
  };
  if (target === undefined) {
    report.figure(`postgres_${name}`, pg.load.rps * per, unit, {
      ...details,
      note: `ratio ${(pg.load.rps / sqlite.load.rps).toFixed(2)} vs SQLite; CPU per ${per > 1 ? 'item' : 'request'}: service ${pgCpu.service} ms, PostgreSQL ${pgCpu.postgres} ms`,
    });
  } else {
    report.result({
      name: `postgres_${name}`,
      value: pg.load.rps * per,
      unit,
      baselineValue: sqlite.load.rps * per,
      baselineLabel: `SQLite ${name.replace(/_/g, ' ')}`,
      target,
      details,
    });
    const cores = `service side ${serviceCores(pg).toFixed(2)} cores (SQLite's ${serviceCores(sqlite).toFixed(2)}), ${pg.load.connections} connections`;
    report.figure(`postgres_${name}_cpu`, pgCpu.service + pgCpu.postgres, `ms CPU per ${per > 1 ? 'item' : 'request'}`, {
      note: `service ${pgCpu.service} ms + PostgreSQL ${pgCpu.postgres} ms; ${cores}`,
    });
  }
}

/**
 * --statements: pg_stat_statements on the bench database, reset before part 1's evidence POST
 * (`reset`) and read after it (`report`): each statement's calls and, per evidence POST (the
 * evidence rows stored in between), its execution and planning time and WAL records.
 */
let evidenceAtReset = 0;
const countEvidence = async (client) => (await client.query('SELECT count(*)::float8 AS n FROM evidence')).rows[0].n;
async function statements(url, step) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    if (step === 'reset') {
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      await client.query('SELECT pg_stat_statements_reset()');
      evidenceAtReset = await countEvidence(client);
      return;
    }
    const { rows } = await client.query(
      `SELECT calls::float8 AS calls, total_exec_time AS exec_ms, total_plan_time AS plan_ms, wal_records::float8 AS wal, regexp_replace(query, '\\s+', ' ', 'g') AS query
         FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        ORDER BY total_exec_time + total_plan_time DESC LIMIT 12`,
    );
    const requests = (await countEvidence(client)) - evidenceAtReset;
    if (!requests) return report.note('--statements: no evidence was stored');
    const us = (ms) => ((ms * 1000) / requests).toFixed(1);
    for (const [i, row] of rows.entries()) {
      report.figure(`statement_${i + 1}`, (row.exec_ms * 1000) / requests, 'µs per evidence POST', {
        calls: row.calls,
        note: `${row.calls} calls; per request: ${us(row.exec_ms)} µs executing, ${us(row.plan_ms)} µs planning, ${(row.wal / requests).toFixed(1)} WAL records: ${row.query.slice(0, 110)}`,
      });
    }
  } finally {
    await client.end();
  }
}

try {
  progress(`run directory ${run.dir}`);
  const tcpUrl = await cluster.createDatabase('bench');
  // --socket: the same database through the cluster's Unix socket (in its directory; pg takes the directory as host)
  const pgUrl = options.socket ? `postgres://postgres@/bench?host=${encodeURIComponent(cluster.dir)}&port=${cluster.port}` : tcpUrl;
  const logKey = join(run.dir, 'pg-ledger-key');
  // part 1: the service side on core 1 for both backends
  pinPostgres(String(SERVER_CPU));
  const profile = options['cpu-prof'];
  const sqlite = await startService('sqlite', join(run.dir, 'sqlite.db'), { cpu: SERVER_CPU, profile });
  const pg = await startService('postgres-1', pgUrl, { cpu: SERVER_CPU, logKey, identityFile: join(run.dir, 'pg.identity.json'), profile });
  const auth = (s) => ({ authorization: `Bearer ${s.apiKey}` });
  const prefix = (s) => `/api/workspaces/${s.workspaceId}/governance`;
  const target = (name, service, path, check, extra = {}) => ({
    name,
    pid: service.pid,
    postgres: name === 'postgres',
    load: { url: service.url, path: `${prefix(service)}/${path}`, headers: auth(service), check },
    ...extra,
  });

  // --- Evidence POST ------------------------------------------------------------------------
  const evidence = evidenceBodies(200);
  const ok = (_s, body) => body.includes('"detail":"ok"');
  if (options.statements) await statements(tcpUrl, 'reset');
  const evidenceTargets = () => [
    target('sqlite', sqlite, 'grc/evidence', ok, { bodies: evidence }),
    target('postgres', pg, 'grc/evidence', ok, { bodies: evidence }),
  ];
  // the result: each service at full load
  const evidenceRuns = await compare('evidence POST', evidenceTargets(), { connections: saturatingConnections });
  reportPair('evidence_post_rate', evidenceRuns, 'req/s', 1, 0.5, { saturation: true });
  if (options.statements) await statements(tcpUrl, 'report');
  // few clients: a replica waits on its round trips, not its CPU
  const fewRuns = await compare(`evidence POST, ${connections} connections`, evidenceTargets(), {});
  reportPair('evidence_post_rate_few_clients', fewRuns, 'req/s');

  // The same loads with the replica alone on its core and PostgreSQL on the other, beside the load
  // generator: a replica and its database on separate CPUs, as deployed (figures, not the result:
  // PostgreSQL gets CPU here that SQLite's service does not).
  pinPostgres(String(LOAD_CPU));
  const separateRuns = await compare('evidence POST (PostgreSQL on the load core)', evidenceTargets(), { connections: saturatingConnections });
  reportPair('evidence_post_rate_database_apart', separateRuns, 'req/s');
  const separateFew = await compare(`evidence POST (PostgreSQL on the load core), ${connections} connections`, evidenceTargets(), {});
  reportPair('evidence_post_rate_database_apart_few_clients', separateFew, 'req/s');
  pinPostgres(String(SERVER_CPU));

  if (evidenceOnly) throw new StopAfterEvidence();

  // --- Signed single attestations (each sent once: a replayed signature is refused) ----------
  const { key } = core.SigningKey.generate();
  const singles = quick ? 15_000 : 40_000;
  const warm = 5_000;
  progress(`signing ${2 * (singles + warm)} single attestations`);
  const signedFor = (service, count) => signedAttestations(core, key, service.workspaceId, count).map((a) => Buffer.from(JSON.stringify(a)));
  const witnessed = (_s, body) => body.includes('"trust_tier":"witnessed"');
  const singleTargets = [sqlite, pg].map((service, i) => {
    const all = signedFor(service, singles + warm);
    return target(i === 0 ? 'sqlite' : 'postgres', service, 'attestations/external', witnessed, {
      bodies: all.slice(0, singles),
      warmupBodies: all.slice(singles),
    });
  });
  const singleRuns = await compare('single attestation POST', singleTargets, { once: true });
  reportPair('single_attestation_rate', singleRuns, 'req/s');

  // --- Batches of 100 ------------------------------------------------------------------------
  const batchCount = quick ? 150 : 500;
  const warmBatches = 30;
  progress(`signing ${2 * (batchCount + warmBatches) * BATCH} attestations for batches of ${BATCH}`);
  const batchTargets = [sqlite, pg].map((service, i) => {
    const signed = signedAttestations(core, key, service.workspaceId, (batchCount + warmBatches) * BATCH);
    const all = [];
    for (let b = 0; b < batchCount + warmBatches; b += 1) all.push(Buffer.from(JSON.stringify({ records: signed.slice(b * BATCH, (b + 1) * BATCH) })));
    return target(i === 0 ? 'sqlite' : 'postgres', service, 'attestations/batch', (_s, body) => body.includes(`"accepted":${BATCH},"rejected":0`), {
      bodies: all.slice(0, batchCount),
      warmupBodies: all.slice(batchCount),
    });
  });
  const batchRuns = await compare('attestation batch POST', batchTargets, { once: true });
  reportPair('batch_attestation_rate', batchRuns, 'attestations/s', BATCH);

  await sqlite.handle.stop(30_000);
  await pg.handle.stop(30_000);

  // --- Two replicas, nothing pinned ------------------------------------------------------------
  pinPostgres(`${LOAD_CPU},${SERVER_CPU}`);
  if (pinned) spawnSync('taskset', ['-a', '-p', '-c', `${LOAD_CPU},${SERVER_CPU}`, String(process.pid)], { stdio: 'ignore' });
  const second = JSON.parse(
    execFileSync(process.execPath, [DIST.bin, 'admin', 'init', '--db', pgUrl, '--log-key', logKey, '--json'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8' },
    }),
  );
  const replicas = [
    await startService('replica-a', pgUrl, { logKey, identityFile: join(run.dir, 'pg.identity.json') }),
    await startService('replica-b', pgUrl, { logKey, identityFile: join(run.dir, 'pg.identity.json') }),
  ];
  const workspaces = [
    { workspaceId: pg.workspaceId, apiKey: pg.apiKey },
    { workspaceId: second.workspace_id, apiKey: second.api_key },
  ];
  // each replica takes writes of both workspaces: connections / 2 per (replica, workspace)
  const lanes = replicas.flatMap((replica) => workspaces.map((ws) => ({ url: replica.url, path: `${prefix(ws)}/grc/evidence`, headers: auth(ws), check: ok })));
  // each replica at full load, as the result's one replica was
  const perLane = Math.max(1, Math.floor(saturatingConnections / workspaces.length));
  const twoLoad = () => Promise.all(lanes.map((lane) => runLoad({ ...lane, bodies: evidence, connections: perLane, durationS: sliceS * rounds, maxRequests })));
  await quiet();
  progress(`two replicas: warm-up (${warmupS} s)`);
  await Promise.all(lanes.map((lane) => runLoad({ ...lane, bodies: evidence, connections: perLane, durationS: warmupS, maxRequests })));
  await quiet();
  progress(
    `two replicas: evidence POST for ${sliceS * rounds} s, ${perLane * lanes.length} connections (${perLane * workspaces.length} per replica, over ${workspaces.length} workspaces)`,
  );
  const two = await withCpu({ replica_a: replicas[0].pid, replica_b: replicas[1].pid }, true, twoLoad);
  const problem = two.result.map(loadProblem).find((p) => p);
  if (problem) report.failed('two_replicas_evidence_post_rate', problem);
  else {
    const requests = two.result.reduce((a, r) => a + r.ok, 0);
    const rate = two.result.reduce((a, r) => a + r.rps, 0);
    const perRequest = cpuPerRequest(two, requests);
    const perReplica = [0, 1].map((i) => two.result.slice(i * workspaces.length, (i + 1) * workspaces.length).reduce((a, r) => a + r.ok, 0));
    report.figure('two_replicas_evidence_post_rate', rate, 'req/s', {
      ...cpuDetails(two, requests),
      requests_per_replica: perReplica,
      note: `ratio ${(rate / evidenceRuns.postgres.load.rps).toFixed(2)} vs one replica pinned to one core with PostgreSQL (the result's run); the two replicas, PostgreSQL and the load generator share 2 cores`,
    });
    // each replica's CPU per request it served; PostgreSQL's per request of both
    report.figure('two_replicas_replica_a_cpu_per_request', (two.cpu.replica_a * 1000) / perReplica[0], 'ms');
    report.figure('two_replicas_replica_b_cpu_per_request', (two.cpu.replica_b * 1000) / perReplica[1], 'ms');
    report.figure('two_replicas_postgres_cpu_per_request', perRequest.postgres, 'ms');
    report.figure('two_replicas_load_generator_cpu_per_request', perRequest.load_generator, 'ms');
    report.figure('two_replicas_other_cpu', two.otherCores ?? NaN, 'cores', {
      note: two.otherCores !== null && two.otherCores > NOISY ? 'other processes were busy: the rates are noisy' : 'quiet',
    });
    const replicaMs = ((two.cpu.replica_a + two.cpu.replica_b) * 1000) / requests;
    report.figure('projection_replicas_per_postgres_core', replicaMs / perRequest.postgres, 'replicas', {
      note: `on paper: a replica saturating one core serves ${Math.round(1000 / replicaMs)} req/s; one PostgreSQL core serves ${Math.round(1000 / perRequest.postgres)} req/s of it (CPU only, commits grouped as measured)`,
    });
    if (two.otherCores !== null && two.otherCores > NOISY)
      report.note(`two replicas: other processes used ${two.otherCores.toFixed(2)} cores during the run; the figures are noisy`);
  }
  for (const replica of replicas) await replica.handle.stop(30_000);
  exitCode = report.finish();
} catch (error) {
  if (error instanceof StopAfterEvidence) {
    // stopped (not killed) first, so that each profile is written
    await Promise.all(services.map((s) => s.stop(30_000)));
    exitCode = report.finish();
  } else {
    process.stderr.write(`bench/postgres.mjs failed: ${error?.stack ?? error}\n`);
    report.failed('run', String(error?.message ?? error));
    exitCode = report.finish() || 1;
  }
} finally {
  // profiles are for reading afterwards: the run is kept
  if (options['cpu-prof']) options.keep = true;
  await Promise.all(services.map((s) => s.stop(5_000)));
  await cluster.kill('SIGQUIT');
  if (!options.keep && exitCode === 0) run.cleanup();
  else process.stderr.write(`kept ${run.dir}\n`);
}
process.exitCode = exitCode;
