#!/usr/bin/env node
// @ts-check
/**
 * CLI start-up, gate check, attest hashing throughput and evidence import (issue 4), against
 * baselines measured in the same run.
 *
 *   node bench/cli.mjs [--quick] [--runs N] [--size BYTES|256M|1G] [--records N] [--data-dir DIR] [--no-pin]
 *
 * The service (`govctl serve` on a SQLite file provisioned with `govctl admin init`) is a child
 * process on core 1; `govctl` processes and their baselines run on core 0 (taskset, when
 * available), spawned directly (no shell) with a clean environment (no inherited SERVICE_*, CI
 * unset, XDG_* inside the run directory).
 *
 * Results:
 * - `govctl --version`           median wall time ≤ 1.3 × `node -e 0`      (runs interleaved)
 * - `govctl --help`              median wall time ≤ 1.5 × `node -e 0`
 * - the read commands (`gates check --json`, `posture --json`, `systems --json`, `evidence list --json`,
 *   `whoami --json`): median wall time ≤ 2.0 × `node -e 0` against the service on loopback, and
 *   ≤ 3.0 × against the embedded store (`--base-url local`)
 * - `govctl attest <tool> --input <1 GiB> --output <small>`: bytes/s ≥ 0.85 × `openssl dgst -sha256` (best of 3 each)
 * - `govctl evidence import` of 100 000 NDJSON records: peak RSS < 150 MB, and records/s ≥ 0.5 × the
 *   service's own evidence POST rate (autocannon, same records, same service, this run)
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync, openSync, closeSync } from 'node:fs';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  DIST,
  Report,
  SERVER_CPU,
  cpuSecondsOf,
  parseOptions,
  pinLoadGenerator,
  positiveNumber,
  progress,
  requireBuild,
  round,
  runDirectory,
  sampleMemory,
  snapshotCode,
  otherCpuMeter,
  timeCommands,
  waitForQuiet,
} from './lib/harness.mjs';
import { loadDetails, loadProblem, runLoad } from './lib/load.mjs';
import { startServe } from './lib/serve.mjs';
import { evidenceRecords } from './lib/records.mjs';

const USAGE = `node bench/cli.mjs [--quick] [--startup-only] [--runs N] [--size SIZE] [--records N] [--data-dir DIR] [--no-pin] [--no-snapshot] [--keep]
  --quick        short smoke run: 10 runs per command, a 256 MiB attest input, 10 000 import records, 3 s loads
  --startup-only only the start-up timings (no attest, no import)
  --runs N       timed runs per start-up command (default 30, quick 10; plus 3 warm-up runs each)
  --size SIZE    attest input size in bytes, or with K/M/G (default 1G, quick 256M)
  --records N    records for evidence import (default 100 000, quick 10 000)
  --duration S   seconds of the evidence POST load that the import is compared with (default 10, quick 3)
  --data-dir DIR where databases, inputs and logs go (default .bench-data/; the attest input is kept there for reuse)
  --no-pin       do not pin processes to cores with taskset
  --no-snapshot  run the code from dist/ in place (default: a copy in the run directory, safe from rebuilds)
  --quiet-wait S before each measurement, wait up to S seconds for other processes to go quiet (default 120; 0: never)
  --retries N    measure again (up to N times, default 2; the import once at most) when other processes used > 0.25 cores meanwhile
  --keep         keep this run's databases and logs`;

const options = parseOptions(
  {
    runs: { type: 'string' },
    size: { type: 'string' },
    records: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'startup-only': { type: 'boolean', default: false },
    'quiet-wait': { type: 'string' },
    retries: { type: 'string' },
  },
  USAGE,
);

/**
 * @param {string | undefined} text
 * @param {number} fallback
 */
function parseSize(text, fallback) {
  if (text === undefined) return fallback;
  const match = /^(\d+(?:\.\d+)?)([KMG]i?B?)?$/i.exec(text.trim());
  if (!match) throw new Error(`--size must be a number of bytes, optionally with K, M or G: ${text}`);
  const unit = { K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[match[2]?.[0]?.toUpperCase()] ?? 1;
  return Math.round(Number(match[1]) * unit);
}

const quick = options.quick;
const runs = positiveNumber(options.runs, 'runs', quick ? 10 : 30);
const attestSize = parseSize(options.size, quick ? 256 * 1024 ** 2 : 1024 ** 3);
const importCount = positiveNumber(options.records, 'records', quick ? 10_000 : 100_000);
const durationS = positiveNumber(options.duration, 'duration', quick ? 3 : 10);
const connections = positiveNumber(options.connections, 'connections', 10);
const quietWaitS = options['quiet-wait'] === undefined ? 120 : Number(options['quiet-wait']);
const retries = options.retries === undefined ? 2 : Number(options.retries);
const STEP_TIMEOUT_MS = 30 * 60_000;

requireBuild(DIST.server, DIST.core, DIST.cli, DIST.bin);
const pinned = pinLoadGenerator(options['no-pin']);
const run = runDirectory('cli', options['data-dir']);
if (!options['no-snapshot']) snapshotCode(run.dir, [DIST.server, DIST.core, DIST.cli, DIST.bin]);
const report = new Report('cli', {
  quick,
  runs,
  attest_input_bytes: attestSize,
  import_records: importCount,
  data_dir: run.dir,
  code: DIST.bin.replace('/bin/govctl.js', ''),
  layout: pinned ? 'service on core 1; govctl, node -e 0, openssl and autocannon on core 0 (taskset)' : 'not pinned',
});

async function quiet() {
  if (quietWaitS > 0) await waitForQuiet({ maxWaitS: quietWaitS });
}

/** Other processes' CPU during a measurement, in cores; above this the figure is flagged as noisy. */
const NOISY = 0.25;
const noisy = (/** @type {number | null | undefined} */ otherCores) => otherCores !== null && otherCores !== undefined && otherCores > NOISY;
/**
 * @param {string} label
 * @param {number | null | undefined} otherCores
 */
function flagNoise(label, otherCores) {
  if (noisy(otherCores)) {
    report.note(`${label}: other processes used ${(otherCores ?? 0).toFixed(2)} cores meanwhile; the figure is noisy`);
  }
}

/** A clean environment for govctl: nothing inherited that could change what it does. */
/**
 * @param {Record<string, string>} [extra]
 * @returns {Record<string, string>}
 */
function cleanEnv(extra = {}) {
  const home = join(run.dir, 'home');
  for (const dir of ['config', 'data', 'cache', 'state']) mkdirSync(join(home, dir), { recursive: true });
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CACHE_HOME: join(home, 'cache'),
    XDG_STATE_HOME: join(home, 'state'),
    TMPDIR: process.env.TMPDIR ?? '/tmp',
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    ...extra,
  };
  return env;
}

const node = process.execPath;
const govctl = (/** @type {string[]} */ ...args) => [node, DIST.bin, ...args];
/** @type {Awaited<ReturnType<typeof startServe>> | undefined} */
let service;
let exitCode = 1;

/** Runs `measure` until other processes stayed quiet during it (at most `limit` + 1 times). */
/**
 * @template R
 * @param {string} label
 * @param {(attempt: number) => R | Promise<R>} measure
 * @param {(result: R) => number | null | undefined} otherOf
 * @param {number} [limit]
 * @returns {Promise<R>}
 */
async function measureQuietly(label, measure, otherOf, limit = retries) {
  for (let attempt = 0; ; attempt += 1) {
    await quiet();
    const result = await measure(attempt);
    const other = otherOf(result);
    if (!noisy(other) || attempt >= limit) {
      flagNoise(label, other);
      return result;
    }
    progress(`${label}: other processes used ${(other ?? 0).toFixed(2)} cores; measuring again`);
  }
}

/** Times two commands interleaved and reports the median ratio. */
/**
 * @param {string} name
 * @param {ReturnType<typeof timeCommands>} timed
 * @param {number} target
 * @param {Record<string, unknown>} [details]
 */
function startupResult(name, timed, target, details = {}) {
  const subject = timed[name];
  const base = timed.node_e_0;
  if (subject.failure) {
    report.failed(`${name}_time`, subject.failure);
    return;
  }
  // every command ran `runs` times, so its statistics are there
  const [mean, median, baseMean, baseMedian] = [subject.mean, subject.median, base.mean, base.median].map((v) => v ?? NaN);
  report.figure(`${name}_mean`, mean, 'ms', { note: `mean ratio ${(mean / baseMean).toFixed(2)}` });
  report.result({
    name: `${name}_median`,
    value: median,
    unit: 'ms',
    baselineValue: baseMedian,
    baselineLabel: '`node -e 0` median',
    target,
    op: '<=',
    details: {
      subject: roundStats(subject),
      baseline: roundStats(base),
      mean_ratio: round(mean / baseMean, 3),
      other_cpu: subject.otherCores === null ? null : round(subject.otherCores, 2),
      ...details,
    },
  });
}

/** @param {Record<string, unknown>} stats */
function roundStats(stats) {
  return Object.fromEntries(Object.entries(stats).map(([k, v]) => [k, typeof v === 'number' ? round(v, 3) : v]));
}

/** Runs a command to completion (bounded), sampling its memory; returns wall time, exit code, peak RSS. */
/**
 * @param {string[]} argv
 * @param {{ env: NodeJS.ProcessEnv, stdoutFile?: string, timeoutMs?: number }} options
 */
async function runMeasured(argv, { env, stdoutFile, timeoutMs = STEP_TIMEOUT_MS }) {
  const out = stdoutFile ? openSync(stdoutFile, 'w') : 'ignore';
  const errFile = `${stdoutFile ?? join(run.dir, 'cmd')}.stderr`;
  const err = openSync(errFile, 'w');
  const start = process.hrtime.bigint();
  const child = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', out, err] });
  if (typeof out === 'number') closeSync(out);
  closeSync(err);
  const memory = sampleMemory(/** @type {number} */ (child.pid), 20);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code, signal] = await once(child, 'exit');
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  clearTimeout(timer);
  const mem = memory.stop();
  return { seconds, code, signal, peakRss: mem.peak, samples: mem.samples, cpuSeconds: mem.cpuSeconds, stderr: readFileSync(errFile, 'utf8').slice(0, 2000) };
}

try {
  progress(`run directory ${run.dir}`);
  service = await startServe({ db: join(run.dir, 'service.db'), cpu: SERVER_CPU, logFile: join(run.dir, 'service.log') });
  const { url, apiKey, workspaceId } = service.info;
  const servicePid = service.pid;
  const serviceEnv = cleanEnv({ SERVICE_BASE_URL: url, SERVICE_API_KEY: apiKey });

  // --- Start-up: --version, --help and the read commands against node -e 0 -----------------------
  // A few records in the service and in the embedded store, so that the reads have rows to show.
  const dataDir = join(run.dir, 'local-store');
  const localEnv = cleanEnv({ GOVCTL_DATA_DIR: dataDir });
  const seedFile = join(run.dir, 'seed.ndjson');
  writeFileSync(
    seedFile,
    `${evidenceRecords(20, { occurredAt: new Date().toISOString() })
      .map((r) => JSON.stringify(r))
      .join('\n')}\n`,
  );
  for (const [where, env, extra] of /** @type {[string, Record<string, string>, string[]][]} */ ([
    ['service', serviceEnv, []],
    ['embedded store', localEnv, ['--base-url', 'local']],
  ])) {
    const seeded = spawnSync(node, [DIST.bin, 'evidence', 'import', seedFile, '--json', ...extra], { env, encoding: 'utf8' });
    if (seeded.status !== 0) throw new Error(`seeding the ${where} failed (exit ${seeded.status}): ${seeded.stderr}`);
  }
  /** @type {[string, string[], number[]?][]} */
  const reads = [
    ['gates_check', ['gates', 'check', '--json'], [0, 1, 2]],
    ['posture', ['posture', '--json']],
    ['systems', ['systems', '--json']],
    ['evidence_list', ['evidence', 'list', '--json']],
    ['whoami', ['whoami', '--json']],
  ];
  const readCommands = reads.flatMap(([name, args, okCodes]) => [
    { name: `govctl_${name}_json`, argv: govctl(...args), env: serviceEnv, okCodes },
    { name: `govctl_${name}_json_local`, argv: govctl(...args, '--base-url', 'local'), env: localEnv, okCodes },
  ]);
  const timed = await measureQuietly(
    'start-up timings',
    () => {
      progress(`start-up: ${runs} runs each (3 warm-up), interleaved`);
      return timeCommands(
        [
          { name: 'node_e_0', argv: [node, '-e', '0'], env: cleanEnv() },
          { name: 'govctl_version', argv: govctl('--version'), env: cleanEnv() },
          { name: 'govctl_help', argv: govctl('--help'), env: cleanEnv() },
          ...readCommands,
        ],
        { runs, warmup: 3, pids: [servicePid] },
      );
    },
    (t) => t.node_e_0.otherCores,
  );
  report.figure('node_e_0_median', timed.node_e_0.median ?? NaN, 'ms', { note: `mean ${(timed.node_e_0.mean ?? NaN).toFixed(2)} ms` });
  startupResult('govctl_version', timed, 1.3);
  startupResult('govctl_help', timed, 1.5);
  for (const command of readCommands) {
    const local = command.name.endsWith('_local');
    startupResult(command.name, timed, local ? 3.0 : 2.0, {
      exit_codes: timed[command.name].exitCodes,
      note: local
        ? 'the embedded store (--base-url local, GOVCTL_DATA_DIR in the run directory, 20 records)'
        : 'SERVICE_BASE_URL + SERVICE_API_KEY only, so each run also resolves the workspace with GET /api/me (20 records)',
    });
  }
  if (!options['startup-only']) await measureThroughput({ url, apiKey, workspaceId, serviceEnv, servicePid });
  exitCode = report.finish();
} catch (error) {
  process.stderr.write(`bench/cli.mjs failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  report.failed('run', error instanceof Error ? error.message : String(error));
  exitCode = report.finish() || 1;
} finally {
  await service?.stop(10_000);
  if (!options.keep && exitCode === 0) run.cleanup();
  else process.stderr.write(`kept ${run.dir}\n`);
}
process.exitCode = exitCode;

/** `attest` hashing throughput and `evidence import` against the service (skipped with --startup-only). */
/** @param {{ url: string, apiKey: string, workspaceId: string, serviceEnv: Record<string, string>, servicePid: number }} service */
async function measureThroughput({ url, apiKey, workspaceId, serviceEnv, servicePid }) {
  // --- attest: streaming SHA-256 of a large input vs openssl -------------------------------------
  const inputFile = join(run.base, `attest-input-${attestSize}.bin`);
  if (!existsSync(inputFile) || statSync(inputFile).size !== attestSize) {
    progress(`writing a ${(attestSize / 1024 ** 2).toFixed(0)} MiB attest input (kept in ${run.base} for later runs)`);
    const stream = createWriteStream(inputFile);
    const block = randomBytes(16 * 1024 ** 2);
    for (let written = 0; written < attestSize;) {
      const n = Math.min(block.length, attestSize - written);
      block.writeUInt32LE(written >>> 0, 0); // blocks differ
      if (!stream.write(n === block.length ? Buffer.from(block) : block.subarray(0, n))) await once(stream, 'drain');
      written += n;
    }
    stream.end();
    await once(stream, 'finish');
  }
  const outputFile = join(run.dir, 'attest-output.json');
  writeFileSync(outputFile, `${JSON.stringify({ verdict: 'ok', score: 0.97 })}\n`);
  const attestEnv = cleanEnv({
    SERVICE_BASE_URL: url,
    SERVICE_API_KEY: apiKey,
    SERVICE_SYSTEM_NAME: 'bench-system',
    SERVICE_SIGNING_KEY: randomBytes(32).toString('hex'),
  });
  // Page cache first, so that both read from memory.
  spawnSync('openssl', ['dgst', '-sha256', inputFile], { stdio: 'ignore' });
  const attest = await measureQuietly(
    'attest',
    async () => {
      /** @type {number[]} */
      const opensslTimes = [];
      /** @type {number[]} */
      const govctlTimes = [];
      /** @type {string | null} */
      let attestFailure = null;
      const attestOther = otherCpuMeter([servicePid]);
      for (let i = 0; i < 3; i += 1) {
        progress(`attest: round ${i + 1} of 3 (openssl, then govctl)`);
        const o = await runMeasured(['openssl', 'dgst', '-sha256', inputFile], { env: process.env, stdoutFile: join(run.dir, `openssl-${i}.out`) });
        if (o.code !== 0) throw new Error(`openssl dgst failed: ${o.stderr}`);
        opensslTimes.push(o.seconds);
        const g = await runMeasured(govctl('attest', 'bench-tool', '--input', inputFile, '--output', outputFile, '--json'), {
          env: attestEnv,
          stdoutFile: join(run.dir, `attest-${i}.out`),
        });
        if (g.code !== 0) {
          attestFailure = `govctl attest exited ${g.code ?? g.signal}: ${g.stderr.trim()}`;
          break;
        }
        govctlTimes.push(g.seconds);
      }
      return { opensslTimes, govctlTimes, attestFailure, attestOtherCores: attestOther() };
    },
    (a) => a.attestOtherCores,
  );
  const { opensslTimes, govctlTimes, attestFailure, attestOtherCores } = attest;
  const opensslBest = Math.min(...opensslTimes);
  report.figure('openssl_sha256_throughput', attestSize / opensslBest / 1e6, 'MB/s', { times_s: opensslTimes.map((t) => round(t, 3)) });
  if (attestFailure) report.failed('attest_throughput', attestFailure);
  else {
    const best = Math.min(...govctlTimes);
    const answer = readFileSync(join(run.dir, 'attest-0.out'), 'utf8').trim();
    report.result({
      name: 'attest_throughput',
      value: attestSize / best / 1e6,
      unit: 'MB/s',
      baselineValue: attestSize / opensslBest / 1e6,
      baselineLabel: '`openssl dgst -sha256`',
      target: 0.85,
      details: {
        input_bytes: attestSize,
        govctl_times_s: govctlTimes.map((t) => round(t, 3)),
        openssl_times_s: opensslTimes.map((t) => round(t, 3)),
        answer: answer.slice(0, 300),
        other_cpu: attestOtherCores === null ? null : round(attestOtherCores, 2),
      },
    });
  }

  // --- evidence import vs the service's own POST rate --------------------------------------------
  const records = evidenceRecords(importCount, { occurredAt: new Date().toISOString() });
  const ndjson = join(run.dir, 'records.ndjson');
  writeFileSync(ndjson, `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const bodies = records.slice(0, 200).map((r) => Buffer.from(JSON.stringify(r)));
  const target = {
    url,
    path: `/api/workspaces/${workspaceId}/governance/grc/evidence`,
    headers: { authorization: `Bearer ${apiKey}` },
    bodies,
    connections,
    serverPid: servicePid,
    check: (/** @type {number} */ _s, /** @type {string} */ body) => body.includes('"detail":"ok"'),
  };
  const post = await measureQuietly(
    'evidence POST load',
    async () => {
      progress('evidence POST: warm-up (2 s)');
      await runLoad({ ...target, durationS: 2, maxRequests: 1_000_000 });
      progress(`evidence POST: ${durationS} s, ${connections} connections (autocannon)`);
      return runLoad({ ...target, durationS, maxRequests: 1_000_000 });
    },
    (r) => r.otherCpu,
  );
  const postProblem = loadProblem(post);
  if (postProblem) throw new Error(`the evidence POST load failed: ${postProblem}`);
  report.figure('service_evidence_post_rate', post.rps, 'req/s', loadDetails(post));

  const { imported, importOtherCores, serviceCpuDuringImport } = await measureQuietly(
    'evidence import',
    async () => {
      progress(`evidence import: ${importCount} records`);
      const importOther = otherCpuMeter([servicePid]);
      const serviceCpuBefore = cpuSecondsOf(servicePid);
      const result = await runMeasured(govctl('evidence', 'import', ndjson, '--json'), { env: serviceEnv, stdoutFile: join(run.dir, 'import.out') });
      return {
        imported: result,
        importOtherCores: importOther(),
        serviceCpuDuringImport: ((cpuSecondsOf(servicePid) ?? NaN) - (serviceCpuBefore ?? NaN)) / result.seconds,
      };
    },
    (r) => r.importOtherCores,
    Math.min(1, retries),
  );
  const lines = readFileSync(join(run.dir, 'import.out'), 'utf8').split('\n').filter(Boolean);
  const okLines = lines.filter((line) => /"status":\s*"ok"/.test(line)).length;
  const importOk = imported.code === 0 && okLines === importCount;
  if (!importOk) {
    const reason = `govctl evidence import exited ${imported.code ?? imported.signal} with ${okLines}/${importCount} records stored: ${imported.stderr.trim().slice(0, 500)} ${lines[0] ?? ''}`;
    report.failed('evidence_import_rate', reason);
    report.failed('evidence_import_peak_rss', 'the import did not complete');
  } else {
    report.result({
      name: 'evidence_import_rate',
      value: importCount / imported.seconds,
      unit: 'records/s',
      baselineValue: post.rps,
      baselineLabel: 'service evidence POST (autocannon)',
      target: 0.5,
      details: {
        records: importCount,
        seconds: round(imported.seconds, 3),
        service_cpu: round(serviceCpuDuringImport, 2),
        govctl_cpu: imported.cpuSeconds === null ? null : round(imported.cpuSeconds / imported.seconds, 2),
        other_cpu: importOtherCores === null ? null : round(importOtherCores, 2),
        first_result: lines[0]?.slice(0, 300),
      },
    });
    report.result({
      name: 'evidence_import_peak_rss',
      value: imported.peakRss / 1e6,
      unit: 'MB',
      baselineValue: 150,
      baselineLabel: 'limit 150 MB',
      target: 1,
      op: '<',
      details: { samples: imported.samples, sampling: 'max of VmHWM/VmRSS of the govctl process, polled every 20 ms' },
    });
  }
}
