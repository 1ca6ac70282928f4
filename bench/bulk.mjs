#!/usr/bin/env node
// @ts-check
/**
 * bench/bulk: bulk and repeatable work (issue "Bulk and repeatable"), ratios measured in one run.
 *
 * - `govctl evidence import` of N records (default 100 000, signed) against `govctl serve` with its
 *   DEFAULT limits, as a ratio of the same import into the embedded store (target ≥ 0.8×); the
 *   import's peak RSS (target < 150 MB);
 * - the same import run again: records stored by it (target 0) and its time as a ratio of the
 *   first run's (target ≤ 0.5×);
 * - `govctl evidence verify --remote` of those N records, its records/s as a ratio of the import's
 *   (target ≥ 0.5×);
 * - `govctl evidence export` of M records (default 1 000 000, seeded straight into a second
 *   service's database): records/s (target ≥ 50 000/s), peak RSS of the CLI (< 150 MB) and of the
 *   service (< 200 MB).
 *
 * Usage: node bench/bulk.mjs [--records N] [--export-records M] [--quick] [--keep]
 * Prints one line per result and a JSON summary last; exit 0 when every result passes.
 * Build first (`node scripts/build.mjs --no-types`): it runs bin/govctl.js and dist/.
 * Talks to 127.0.0.1 only; every process it starts it stops; bounded by the timeouts below.
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, createReadStream, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { runChild } from './lib/harness.mjs';
import { timedRun } from './lib/timed-run.mjs';
import { modelEvaluation, riskAssessment } from './lib/records.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'govctl.js');
const { values } = parseArgs({
  options: {
    records: { type: 'string' },
    'export-records': { type: 'string' },
    quick: { type: 'boolean' },
    keep: { type: 'boolean' },
  },
});
const N = Number(values.records ?? (values.quick ? 10_000 : 100_000));
const M = Number(values['export-records'] ?? (values.quick ? 100_000 : 1_000_000));
const SIGNING_KEY = '5e'.repeat(32);
const STEP_TIMEOUT_MS = 20 * 60_000;

mkdirSync(join(ROOT, '.bench-data'), { recursive: true });
const runDir = mkdtempSync(join(ROOT, '.bench-data', 'bulk-'));
/** @type {{ name: string, value: number, unit: string, ratio: number | undefined, target: string, pass: boolean }[]} */
const results = [];
/**
 * @param {string} name
 * @param {number} value
 * @param {string} unit
 * @param {number | undefined} ratio
 * @param {string} target
 * @param {boolean} pass
 * @param {string} [extra]
 */
function report(name, value, unit, ratio, target, pass, extra = '') {
  results.push({ name, value, unit, ratio, target, pass });
  console.log(
    `${name}: ${typeof value === 'number' ? Math.round(value * 100) / 100 : value} ${unit}${ratio !== undefined ? ` (ratio ${ratio.toFixed(3)}${extra})` : extra}, target ${target} ${pass ? 'PASS' : 'FAIL'}`,
  );
}
const note = (/** @type {string} */ text) => console.log(`  ${text}`);

/** Runs govctl to completion under /usr/bin/time (lib/timed-run.mjs). */
/**
 * @param {string[]} args
 * @param {{ env?: Record<string, string>, stdout?: 'ignore' | 'pipe' | number }} [options]
 */
function govctl(args, { env = {}, stdout = 'ignore' } = {}) {
  return timedRun({ bin: BIN, args, dir: runDir, env, stdout, timeoutMs: STEP_TIMEOUT_MS });
}

/** `govctl serve` on a free port with its default limits; resolves once it listens. */
/**
 * @param {string} db
 * @returns {Promise<{ url: string, pid: number | undefined, peakRss: () => number, stop: () => Promise<unknown> }>}
 */
function serve(db) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--db', db, '--port', '0'], {
      cwd: runDir,
      env: { PATH: process.env.PATH, HOME: runDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let seen = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`govctl serve did not start: ${seen}`));
    }, 30_000);
    const look = (/** @type {Buffer} */ chunk) => {
      seen += chunk;
      const url = /http:\/\/127\.0\.0\.1:\d+/.exec(seen)?.[0];
      if (url) {
        clearTimeout(timer);
        resolvePromise({
          url,
          pid: child.pid,
          peakRss: () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024,
          stop: () =>
            new Promise((done) => {
              child.once('close', done);
              child.kill('SIGTERM');
              setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
            }),
        });
      }
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
  });
}

/** Provisions a service database with `govctl admin init`; its identity and API key. */
/** @param {string} db */
function provision(db) {
  return JSON.parse(
    execFileSync(process.execPath, [BIN, 'admin', 'init', '--db', db, '--json'], {
      cwd: runDir,
      env: { PATH: process.env.PATH, HOME: runDir },
      encoding: 'utf8',
    }),
  );
}

/**
 * @param {string} db
 * @returns {number}
 */
function countEvidence(db) {
  const handle = new Database(db, { readonly: true });
  try {
    return Number(handle.prepare('SELECT count(*) FROM evidence').pluck().get());
  } finally {
    handle.close();
  }
}

async function main() {
  console.error(`bench/bulk: ${N} records to import, ${M} to export; run files in ${runDir}`);
  // The input: N records of two types over 50 systems, each with its occurred_at (a repeatable import).
  const input = join(runDir, 'records.ndjson');
  const base = Date.now() - 30 * 86_400_000;
  const lines = [];
  for (let i = 0; i < N; i++) {
    const occurredAt = new Date(base + i * 1000).toISOString();
    lines.push(JSON.stringify(i % 2 === 0 ? riskAssessment(i, { occurredAt }) : modelEvaluation(i, { occurredAt })));
  }
  writeFileSync(input, `${lines.join('\n')}\n`);
  lines.length = 0;

  // 1. The embedded store.
  const dataDir = join(runDir, 'local');
  mkdirSync(dataDir);
  console.error('importing into the embedded store …');
  const local = await govctl(['evidence', 'import', input, '--data-dir', dataDir], { env: { SERVICE_SIGNING_KEY: SIGNING_KEY } });
  if (local.code !== 0) throw new Error(`embedded import failed: ${local.stderr}`);
  const localRate = N / local.seconds;
  note(`embedded store: ${N} records in ${local.seconds.toFixed(1)} s = ${Math.round(localRate)} records/s, peak RSS ${(local.peakRss / 1e6).toFixed(0)} MB`);

  // 2. govctl serve with its default limits.
  const db = join(runDir, 'service.db');
  const identity = provision(db);
  const service = await serve(db);
  const env = {
    SERVICE_BASE_URL: service.url,
    SERVICE_API_KEY: identity.api_key,
    SERVICE_SIGNING_KEY: SIGNING_KEY,
    SERVICE_WORKSPACE_ID: identity.workspace_id,
  };
  try {
    console.error('importing into govctl serve …');
    const remote = await govctl(['evidence', 'import', input], { env });
    if (remote.code !== 0) throw new Error(`service import failed: ${remote.stderr}`);
    const remoteRate = N / remote.seconds;
    report('evidence_import_service_vs_embedded', remoteRate, 'records/s', remoteRate / localRate, '≥ 0.8×', remoteRate / localRate >= 0.8);
    report('evidence_import_peak_rss', remote.peakRss / 1e6, 'MB', undefined, '< 150 MB', remote.peakRss < 150e6);
    const stored = countEvidence(db);

    console.error('importing again …');
    const again = await govctl(['evidence', 'import', input], { env });
    if (again.code !== 0) throw new Error(`second import failed: ${again.stderr}`);
    const added = countEvidence(db) - stored;
    report('evidence_reimport_new_records', added, 'records', undefined, '= 0', added === 0);
    report('evidence_reimport_time', again.seconds, 's', again.seconds / remote.seconds, '≤ 0.5× the first run', again.seconds / remote.seconds <= 0.5);

    console.error('verify --remote …');
    const verified = await govctl(['evidence', 'verify', '--remote'], { env });
    if (verified.code !== 0) throw new Error(`verify --remote failed: ${verified.stderr}`);
    const verifyRate = N / verified.seconds;
    report('evidence_verify_remote_rate', verifyRate, 'records/s', verifyRate / remoteRate, '≥ 0.5× the import rate', verifyRate / remoteRate >= 0.5);
  } finally {
    await service.stop();
  }

  // 3. Export of M records from a second service, seeded through the store's own write path.
  const exportDb = join(runDir, 'export.db');
  const exportIdentity = provision(exportDb);
  console.error(`seeding ${M} records …`);
  await runChild(join(ROOT, 'bench', 'lib', 'seed-evidence.mjs'), ['--db', exportDb, '--workspace', exportIdentity.workspace_id, '--count', String(M)], {
    timeoutMs: STEP_TIMEOUT_MS,
  });
  const exporter = await serve(exportDb);
  try {
    console.error('exporting …');
    const outFile = join(runDir, 'export.ndjson');
    const sink = openSync(outFile, 'w');
    const exported = await govctl(['evidence', 'export'], { env: { SERVICE_BASE_URL: exporter.url, SERVICE_API_KEY: exportIdentity.api_key }, stdout: sink });
    closeSync(sink);
    let lines = 0;
    for await (const chunk of createReadStream(outFile)) for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
    if (lines !== M) throw new Error(`the export wrote ${lines} lines, not ${M}`);
    if (exported.code !== 0) throw new Error(`export failed: ${exported.stderr}`);
    const rate = M / exported.seconds;
    report('evidence_export_rate', rate, 'records/s', undefined, '≥ 50 000/s', rate >= 50_000);
    report('evidence_export_cli_peak_rss', exported.peakRss / 1e6, 'MB', undefined, '< 150 MB', exported.peakRss < 150e6);
    const serviceRss = exporter.peakRss();
    report('evidence_export_service_peak_rss', serviceRss / 1e6, 'MB', undefined, '< 200 MB', serviceRss < 200e6);
  } finally {
    await exporter.stop();
  }
}

let failed = false;
try {
  await main();
} catch (error) {
  failed = true;
  console.error(`bench/bulk: ${error instanceof Error ? error.stack : error}`);
}
const pass = !failed && results.every((r) => r.pass);
console.log(JSON.stringify({ benchmark: 'bulk', records: N, exportRecords: M, pass, results }));
if (pass && !values.keep) rmSync(runDir, { recursive: true, force: true });
else console.error(`bench/bulk: run files kept in ${runDir}`);
process.exitCode = pass ? 0 : 1;
