#!/usr/bin/env node
// @ts-check
/**
 * Service throughput, latency and memory (issue 3), against baselines measured in the same run.
 *
 *   node bench/server.mjs [--quick] [--duration S] [--connections N] [--records N] [--data-dir DIR] [--no-pin]
 *
 * Layout: the server under test (`govctl serve` on a SQLite file provisioned with `govctl admin init`) and the
 * baseline (a bare node:http JSON server) each run in a child process on core 1; autocannon runs
 * in this process on core 0 (taskset, when available). Every load is bounded by time and request
 * count and targets 127.0.0.1.
 *
 * Results (ratios against figures of this run):
 * - evidence POST rate                ≥ 0.25 × bare node:http POST rate (same bodies, connections, duration)
 * - signed single attestation rate    ≥ 0.15 × bare rate
 * - signed attestations in batches of 100, attestations/s ≥ 0.8 × single-core verifyEd25519 rate
 * - GET posture-brief and GET gates/check p99 < 20 ms with 1 000 000 evidence records in the workspace
 * - max RSS of the server process     < 200 MB
 */
import { join } from 'node:path';
import {
  DIST,
  LIB_DIR,
  Report,
  SERVER_CPU,
  parseOptions,
  pinLoadGenerator,
  positiveNumber,
  progress,
  requireBuild,
  round,
  runChild,
  runDirectory,
  sampleMemory,
  waitForQuiet,
  snapshotCode,
  startChild,
} from './lib/harness.mjs';
import { loadDetails, loadProblem, mergeLoads, runLoad } from './lib/load.mjs';
import { startServe } from './lib/serve.mjs';
import { evidenceBodies, signedAttestations } from './lib/records.mjs';

const USAGE = `node bench/server.mjs [--quick] [--duration S] [--connections N] [--records N] [--data-dir DIR] [--no-pin] [--keep]
  --quick        short smoke run: 3 s per load, 50 000 records for the posture/gates latency
  --duration S   seconds per load (default 10, quick 3)
  --connections  autocannon connections (default 10)
  --records N    evidence records in the workspace for posture/gates (default 1 000 000, quick 50 000)
  --data-dir DIR where databases and logs go (default .bench-data/)
  --no-pin       do not pin processes to cores with taskset
  --no-snapshot  load the code from dist/ in place (default: a copy in the run directory, safe from rebuilds)
  --keep         keep this run's databases and logs
  --quiet-wait S before each load, wait up to S seconds for other processes to go quiet (default 120; 0: never)
  --retries N    measure a load again (up to N times, default 2) when other processes used > 0.25 cores during it
  --only LIST    run only these loads, comma-separated: evidence, single, batch, reads (default all; for
                 iterating on one path: a run with --only is not a complete result)
  --cpu-prof     take a CPU profile of each service process (node --cpu-prof, <run dir>/profiles/<service>/;
                 summarise with node bench/lib/profile-summary.mjs FILE); implies --keep`;

const options = parseOptions(
  {
    only: { type: 'string' },
    records: { type: 'string' },
    'quiet-wait': { type: 'string' },
    retries: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'cpu-prof': { type: 'boolean', default: false },
  },
  USAGE,
);
const quick = options.quick;
const LOADS = ['evidence', 'single', 'batch', 'reads'];
const only = new Set(options.only === undefined ? LOADS : options.only.split(',').map((name) => name.trim()));
for (const name of only) if (!LOADS.includes(name)) throw new Error(`--only: unknown load ${name} (one of ${LOADS.join(', ')})`);
const durationS = positiveNumber(options.duration, 'duration', quick ? 3 : 10);
const connections = positiveNumber(options.connections, 'connections', 10);
const seedCount = positiveNumber(options.records, 'records', quick ? 50_000 : 1_000_000);
const warmupS = Math.min(2, Math.max(1, durationS / 5));
const maxRequests = quick ? 200_000 : 1_000_000;
const quietWaitS = options['quiet-wait'] === undefined ? 120 : Number(options['quiet-wait']);
const retries = options.retries === undefined ? 2 : Number(options.retries);
/** Slices per load, alternating baseline and service. */
const rounds = quick ? 1 : 2;

/** Other processes' CPU during a measured run, in cores; above this the figure is flagged as noisy. */
const NOISY = 0.25;
async function quiet() {
  if (quietWaitS > 0) await waitForQuiet({ maxWaitS: quietWaitS });
}
/** @typedef {import('./lib/load.mjs').LoadResult} LoadResult */

/** @param {LoadResult} result */
function isNoisy(result) {
  return result.otherCpu !== null && result.otherCpu > NOISY;
}
/**
 * @param {string} label
 * @param {LoadResult} result
 */
function flagNoise(label, result) {
  if (isNoisy(result)) {
    report.note(`${label}: other processes used ${(result.otherCpu ?? 0).toFixed(2)} cores during the run; the figure is noisy`);
  }
}

requireBuild(DIST.server, DIST.core, DIST.cli, DIST.bin);
const pinned = pinLoadGenerator(options['no-pin']);
const run = runDirectory('server', options['data-dir']);
if (!options['no-snapshot']) snapshotCode(run.dir, [DIST.server, DIST.core, DIST.cli, DIST.bin]);
const report = new Report('server', {
  quick,
  duration_s: durationS,
  connections,
  evidence_records_for_reads: seedCount,
  data_dir: run.dir,
  code: DIST.server.replace('/dist/lib/server.js', ''),
  layout: pinned ? 'server and baseline on core 1, autocannon on core 0 (taskset)' : 'not pinned',
});

const core = await import(DIST.core);
const BASELINE = join(LIB_DIR, 'baseline-server.mjs');
const children = [];
/** @type {{ label: string, peak_bytes: number, last_rss_bytes: number | null }[]} */
const serverPeaks = [];
let exitCode = 1;

/**
 * A service process on the server core, pinned explicitly, since a child inherits this process's core 0.
 * @param {string} dbPath
 * @param {string} label
 */
async function startService(dbPath, label) {
  const cpu = SERVER_CPU;
  // --cpu-prof: node's own profiler over the whole service process, written when it stops.
  const profileDir = join(run.dir, 'profiles', label);
  const handle = await startServe({
    db: dbPath,
    cpu,
    logFile: join(run.dir, `${label}.log`),
    nodeArgs: options['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [],
  });
  children.push(handle);
  const memory = sampleMemory(handle.pid, 50);
  return { ...handle.info, pid: handle.pid, handle, memory, profileDir };
}

/**
 * @param {Awaited<ReturnType<typeof startService>>} service
 * @param {string} label
 */
async function stopService(service, label) {
  const memory = service.memory.stop();
  await service.handle.stop(30_000);
  serverPeaks.push({ label, peak_bytes: memory.peak, last_rss_bytes: memory.last?.rss ?? null });
  report.figure(`${label}_server_peak_rss`, memory.peak / 1e6, 'MB');
  if (options['cpu-prof']) report.note(`profile of the ${label} service (all its loads, warm-ups included): ${service.profileDir}`);
}

/**
 * A service rate against the bare node:http server's for the same bodies: the bare rate as a
 * figure, then the result (or the reason there is none).
 */
/**
 * @param {string} name
 * @param {string} bareFigure
 * @param {{ baseline: LoadResult, service: LoadResult }} runs
 * @param {number} target
 * @param {Record<string, unknown>} [details]
 */
function reportAgainstBare(name, bareFigure, runs, target, details = {}) {
  report.figure(bareFigure, runs.baseline.rps, 'req/s', loadDetails(runs.baseline));
  const problem = loadProblem(runs.service) ?? loadProblem(runs.baseline);
  if (problem) {
    report.failed(name, problem);
    return;
  }
  report.result({
    name,
    value: runs.service.rps,
    unit: 'req/s',
    baselineValue: runs.baseline.rps,
    baselineLabel: 'bare node:http POST',
    target,
    details: { service: loadDetails(runs.service), baseline: loadDetails(runs.baseline), ...details },
  });
}

/**
 * A load against both targets: a warm-up each, then `rounds` slices of durationS / rounds each,
 * alternating baseline and service (so that a drift of the machine's speed hits both alike), each
 * slice measured again when other processes disturbed it. The slices of a target are merged.
 */
/**
 * A server a load is aimed at.
 * @typedef {{ url: string, pid: number, path: string, headers?: Record<string, string>, check?: (status: number, body: string) => boolean }} Target
 */
/**
 * @param {string} label
 * @param {{ bodies: (string | Buffer)[], warmupBodies?: (string | Buffer)[], serviceMaxRequests?: number, baseline: Target, service: Target }} shape
 */
async function compare(label, shape) {
  /** @type {['baseline' | 'service', Target][]} */
  const targets = [
    ['baseline', shape.baseline],
    ['service', shape.service],
  ];
  /** @type {Record<'baseline' | 'service', LoadResult[]>} */
  const slices = { baseline: [], service: [] };
  const sliceS = durationS / rounds;
  // With serviceMaxRequests, each body reaches the service at most once (a witness signature is
  // accepted once: a replay would be a 422): every run, retries included, starts after the last.
  let serviceNext = 0;
  for (const [name, target] of targets) {
    await quiet();
    progress(`${label}: warm-up ${name} (${warmupS} s)`);
    await runLoad({ ...target, bodies: shape.warmupBodies ?? shape.bodies, connections, durationS: warmupS, maxRequests });
  }
  for (let round = 0; round < rounds; round += 1) {
    for (const [name, target] of targets) {
      const serviceMax = name === 'service' ? shape.serviceMaxRequests : undefined;
      const once = serviceMax !== undefined;
      let result;
      for (let attempt = 0; ; attempt += 1) {
        progress(
          `${label}: ${name} ${rounds > 1 ? `slice ${round + 1}/${rounds} ` : ''}for ${sliceS} s, ${connections} connections${attempt ? ' (again: the machine was busy)' : ''}`,
        );
        // the service's cap (bodies each sent once) is shared out between the slices
        const cap = serviceMax !== undefined ? Math.min(Math.floor(serviceMax / rounds), shape.bodies.length - serviceNext - connections) : maxRequests;
        if (cap < connections) {
          if (result) break; // no distinct bodies left for a retry: keep the run there is
          throw new Error(`${label}: too few distinct bodies for a run; sign more`);
        }
        result = await runLoad({
          ...target,
          bodies: shape.bodies,
          firstBody: once ? serviceNext : 0,
          connections,
          durationS: sliceS,
          maxRequests: cap,
          serverPid: target.pid,
        });
        if (once) serviceNext += result.bodiesSent ?? 0;
        if (!isNoisy(result) || attempt >= retries) break;
        await quiet();
      }
      slices[name].push(result);
    }
  }
  const runs = { baseline: mergeLoads(slices.baseline), service: mergeLoads(slices.service) };
  for (const [name] of targets) flagNoise(`${label} (${name})`, runs[name]);
  return runs;
}

try {
  progress(`run directory ${run.dir}`);
  const service = await startService(join(run.dir, 'writes.db'), 'writes');
  let writesStopped = false;
  const baseline = await startChild(BASELINE, [], { cpu: SERVER_CPU });
  children.push(baseline);
  const baselineMemory = sampleMemory(baseline.pid, 100);

  const auth = { authorization: `Bearer ${service.apiKey}` };
  const prefix = `/api/workspaces/${service.workspaceId}/governance`;
  const { key } = core.SigningKey.generate();

  // --- Evidence POST -------------------------------------------------------------------------
  if (only.has('evidence')) {
    const evidence = evidenceBodies(200);
    report.figure('evidence_body_size', evidence.reduce((n, b) => n + b.length, 0) / evidence.length, 'bytes');
    const evidenceRuns = await compare('evidence POST', {
      bodies: evidence,
      baseline: { url: baseline.info.url, pid: baseline.pid, path: '/evidence' },
      service: { url: service.url, pid: service.pid, path: `${prefix}/grc/evidence`, headers: auth, check: (_s, body) => body.includes('"detail":"ok"') },
    });
    reportAgainstBare('evidence_post_rate', 'bare_post_rate_evidence_body', evidenceRuns, 0.25);
  }

  // --- Signed single attestations --------------------------------------------------------------
  if (only.has('single')) {
    // Every body is sent to the service at most once (a replayed signature is refused): enough
    // distinct ones for the measured slices and their retries at about 10 000 req/s, and warm-up
    // bodies of their own.
    const singleCount = quick ? 40_000 : 150_000;
    const singleWarmup = quick ? 10_000 : 25_000;
    progress(`signing ${singleCount + singleWarmup} single attestations`);
    const allSingles = signedAttestations(core, key, service.workspaceId, singleCount + singleWarmup).map((a) => Buffer.from(JSON.stringify(a)));
    const singles = allSingles.slice(0, singleCount);
    report.figure('attestation_body_size', singles[0].length, 'bytes');
    const singleRuns = await compare('single attestation POST', {
      bodies: singles,
      warmupBodies: allSingles.slice(singleCount),
      serviceMaxRequests: singleCount,
      baseline: { url: baseline.info.url, pid: baseline.pid, path: '/attestation' },
      service: {
        url: service.url,
        pid: service.pid,
        path: `${prefix}/attestations/external`,
        headers: auth,
        check: (_s, body) => body.includes('"trust_tier":"witnessed"'),
      },
    });
    reportAgainstBare('signed_attestation_rate', 'bare_post_rate_attestation_body', singleRuns, 0.15, {
      distinct_bodies: singleCount,
      note: 'the service gets each body at most once (a replayed signature is a 422); the baseline cycles them',
    });
  }

  // --- Batches of 100 vs the verification rate -------------------------------------------------
  if (only.has('batch')) {
    const BATCH = 100;
    const batchBodies = quick ? 150 : 600;
    const warmupBatches = 30;
    // Distinct batches for the measured slices and each retry they may need (a batch replayed would
    // be rejected item by item), and warm-up batches of their own.
    const batchSigned = batchBodies * (retries + 1);
    progress(`signing ${(batchSigned + warmupBatches) * BATCH} attestations for ${batchSigned} + ${warmupBatches} (warm-up) batches of ${BATCH}`);
    const batchAttestations = signedAttestations(core, key, service.workspaceId, (batchSigned + warmupBatches) * BATCH);
    const allBatches = [];
    for (let i = 0; i < batchSigned + warmupBatches; i += 1)
      allBatches.push(Buffer.from(JSON.stringify({ records: batchAttestations.slice(i * BATCH, (i + 1) * BATCH) })));
    const batches = allBatches.slice(0, batchSigned);
    report.figure('batch_body_size', batches[0].length, 'bytes');
    // The verification rate is measured right before and right after the batch loads (the mean is
    // the baseline), so that a drift of the machine's speed hits both sides alike.
    const measureVerify = async (/** @type {string} */ when) => {
      await quiet();
      progress(`measuring the single-core verifyEd25519 rate ${when} the batch load (2 s, child process on the server core)`);
      return runChild(join(LIB_DIR, 'verify-rate.mjs'), ['--seconds', '2'], { cpu: SERVER_CPU, timeoutMs: 120_000 });
    };
    const verifyBefore = await measureVerify('before');
    // The batch load has a service process of its own on the same database, so that its memory is
    // measured alone. One govctl serve per database (docs/security.md): the first one stops first.
    await stopService(service, 'writes');
    writesStopped = true;
    const batchService = await startService(join(run.dir, 'writes.db'), 'batch');
    const batchRuns = await compare('attestation batch POST', {
      bodies: batches,
      warmupBodies: allBatches.slice(batchSigned),
      // the service gets every batch once at most in the measured run (all attestations distinct)
      serviceMaxRequests: batchBodies,
      baseline: { url: baseline.info.url, pid: baseline.pid, path: '/batch' },
      service: {
        url: batchService.url,
        pid: batchService.pid,
        path: `${prefix}/attestations/batch`,
        headers: auth,
        check: (_s, body) => body.includes(`"accepted":${BATCH},"rejected":0`),
      },
    });
    report.figure('bare_post_rate_batch_body', batchRuns.baseline.rps * BATCH, 'items/s', loadDetails(batchRuns.baseline));
    baselineMemory.stop();
    await baseline.stop();

    await stopService(batchService, 'batch');
    const verifyAfter = await measureVerify('after');
    const verifyRate = (verifyBefore.perSecond + verifyAfter.perSecond) / 2;
    const verify = {
      before_per_s: Math.round(verifyBefore.perSecond),
      after_per_s: Math.round(verifyAfter.perSecond),
      message_bytes: verifyBefore.messageBytes,
      distinct_messages: verifyBefore.distinctMessages,
    };
    report.figure('ed25519_verify_rate_single_core', verifyRate, 'verifications/s', {
      ...verify,
      note: `before ${verify.before_per_s}/s, after ${verify.after_per_s}/s`,
    });
    const batchProblem = loadProblem(batchRuns.service);
    if (batchProblem) report.failed('batch_attestation_rate', batchProblem);
    else {
      report.result({
        name: 'batch_attestation_rate',
        value: batchRuns.service.rps * BATCH,
        unit: 'attestations/s',
        baselineValue: verifyRate,
        baselineLabel: 'single-core verifyEd25519',
        target: 0.8,
        details: { service: loadDetails(batchRuns.service), batch_size: BATCH, verify },
      });
    }
  }
  baselineMemory.stop();
  await baseline.stop();
  if (!writesStopped) await stopService(service, 'writes');

  // --- Posture brief and gates with many records -----------------------------------------------
  if (only.has('reads')) {
    const readsDb = join(run.dir, 'reads.db');
    const provisioned = await startService(readsDb, 'reads-provision');
    provisioned.memory.stop();
    await provisioned.handle.stop(30_000);
    progress(`seeding ${seedCount} evidence records through the store's recordEvidence (child process)`);
    const seeded = await runChild(join(LIB_DIR, 'seed-evidence.mjs'), ['--db', readsDb, '--workspace', provisioned.workspaceId, '--count', String(seedCount)], {
      timeoutMs: 60 * 60_000,
      logFile: join(run.dir, 'seed.log'),
    });
    report.figure('seeded_evidence_records', seeded.rows, 'records', {
      note: `loaded in ${round(seeded.seconds, 1)} s (${Math.round(seeded.perSecond)}/s) via createApp().store.recordEvidence, no HTTP`,
    });

    const reads = await startService(readsDb, 'reads');
    const readAuth = { authorization: `Bearer ${reads.apiKey}` };
    const readPrefix = `/api/workspaces/${reads.workspaceId}/governance`;
    for (const [name, path, marker] of [
      ['posture_brief', `${readPrefix}/grc/posture-brief`, '"overall_pct"'],
      ['gates_check', `${readPrefix}/grc/gates/check`, '"gates"'],
    ]) {
      const target = {
        url: reads.url,
        serverPid: reads.pid,
        path,
        headers: readAuth,
        method: /** @type {const} */ ('GET'),
        check: (/** @type {number} */ _s, /** @type {string} */ body) => body.includes(marker),
      };
      await quiet();
      progress(`${name}: warm-up (${warmupS} s)`);
      await runLoad({ ...target, connections, durationS: warmupS, maxRequests });
      let result;
      for (let attempt = 0; ; attempt += 1) {
        progress(`${name}: GET for ${durationS} s, ${connections} connections${attempt ? ' (again: the machine was busy)' : ''}`);
        result = await runLoad({ ...target, connections, durationS, maxRequests });
        if (!isNoisy(result) || attempt >= retries) break;
        await quiet();
      }
      flagNoise(name, result);
      const problem = loadProblem(result);
      if (problem) {
        report.failed(`${name}_p99`, problem);
        continue;
      }
      report.figure(`${name}_rate`, result.rps, 'req/s');
      report.figure(`${name}_p50`, result.latency.p50, 'ms');
      report.result({
        name: `${name}_p99`,
        value: result.latency.p99,
        unit: 'ms',
        baselineValue: 20,
        baselineLabel: 'limit 20 ms',
        target: 1,
        op: '<',
        details: { ...loadDetails(result), evidence_records: seeded.rows },
      });
    }
    await stopService(reads, 'reads');
  }

  // --- Memory ------------------------------------------------------------------------------------
  const peak = Math.max(...serverPeaks.map((p) => p.peak_bytes));
  report.result({
    name: 'server_max_rss',
    value: peak / 1e6,
    unit: 'MB',
    baselineValue: 200,
    baselineLabel: 'limit 200 MB',
    target: 1,
    op: '<',
    details: { processes: serverPeaks, baseline_server_peak_bytes: baselineMemory.peak },
  });
  exitCode = report.finish();
} catch (error) {
  process.stderr.write(`bench/server.mjs failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  report.failed('run', error instanceof Error ? error.message : String(error));
  exitCode = report.finish() || 1;
} finally {
  await Promise.all(children.map((c) => c.stop(5_000)));
  if (!options.keep && !options['cpu-prof'] && exitCode === 0) run.cleanup();
  else process.stderr.write(`kept ${run.dir}\n`);
}
process.exitCode = exitCode;
