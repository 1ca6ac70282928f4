#!/usr/bin/env node
// @ts-check
/**
 * `govctl ledger audit` of a large log (issue 12): records/s and the CLI's peak RSS.
 *
 *   node bench/ledger-audit.mjs [--records N] [--attestations A] [--quick] [--data-dir DIR] [--no-pin] [--keep]
 *
 * A real `govctl serve` over a database holding N records (default 100 000): N − A evidence
 * records seeded through the store's own write path (bench/lib/seed-evidence.mjs, which assigns
 * each its leaf as a POST does) and A signed attestations (default 1000) POSTed as one batch; the
 * service integrates them into the log on its timer, and the benchmark waits until the signed
 * checkpoint covers all N. Then `govctl ledger audit --json` runs to completion under
 * /usr/bin/time (pinned to the load core, the service to the other): it downloads every entry
 * bundle, reads every record in bulk, checks each against its leaf (sha256, client_sig,
 * witness_sig) and recomputes posture and gates.
 *
 * Targets: ≥ 20 000 records/s, peak RSS < 200 MB (each as a ratio of its limit). Supporting
 * figures: the requests the audit made (lines of the service's request log), the service's peak RSS.
 * Bounded: every step has a timeout; talks to 127.0.0.1 only; stops what it starts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DIST,
  LIB_DIR,
  SERVER_CPU,
  Report,
  memoryOf,
  parseOptions,
  pinLoadGenerator,
  positiveNumber,
  progress,
  requireBuild,
  runChild,
  runDirectory,
  snapshotCode,
} from './lib/harness.mjs';
import { signedAttestations } from './lib/records.mjs';
import { startServe } from './lib/serve.mjs';
import { timedRun } from './lib/timed-run.mjs';

const USAGE = `node bench/ledger-audit.mjs [--records N] [--attestations A] [--quick] [--data-dir DIR] [--no-pin] [--keep]
  --records N       records in the log (default 100 000, quick 20 000)
  --attestations A  of which signed attestations (default 1000, quick 200)
  --quick           smoke run with a smaller log
  --data-dir DIR    where the database and logs go (default .bench-data/)
  --no-pin          do not pin processes to cores with taskset
  --keep            keep this run's database and logs`;

const options = parseOptions({ records: { type: 'string' }, attestations: { type: 'string' }, keep: { type: 'boolean', default: false } }, USAGE);
const quick = options.quick;
const N = positiveNumber(options.records, 'records', quick ? 20_000 : 100_000);
const A = Math.min(N, positiveNumber(options.attestations, 'attestations', quick ? 200 : 1000));
const STEP_TIMEOUT_MS = 15 * 60_000;
const TARGET_RATE = 20_000;
const TARGET_RSS = 200e6;

requireBuild(DIST.server, DIST.core, DIST.bin);
pinLoadGenerator(options['no-pin']);
const run = runDirectory('ledger-audit', options['data-dir']);
if (!options['no-snapshot']) snapshotCode(run.dir, [DIST.server, DIST.core, DIST.bin]);
const report = new Report('ledger-audit', { quick, records: N, attestations: A });
const db = join(run.dir, 'audit.db');
const serveLog = join(run.dir, 'serve.log');

/** Lines of the service's log so far (one JSON line per request after the listening line). */
const logLines = () =>
  readFileSync(serveLog, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{')).length;

/** Runs govctl to completion under /usr/bin/time (lib/timed-run.mjs), its stdout kept. */
/**
 * @param {string[]} args
 * @param {Record<string, string>} [env]
 */
function timedGovctl(args, env) {
  return timedRun({ bin: DIST.bin, args, dir: run.dir, env, stdout: 'pipe', timeoutMs: STEP_TIMEOUT_MS });
}

/**
 * @param {{ info: { url: string, apiKey: string, workspaceId: string } }} service
 * @param {'GET' | 'POST'} method
 * @param {string} rest
 * @param {unknown} [body]
 */
async function request(service, method, rest, body) {
  const reply = await fetch(`${service.info.url}/api/workspaces/${service.info.workspaceId}/governance/${rest}`, {
    method,
    headers: { authorization: `Bearer ${service.info.apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(120_000),
  });
  const text = await reply.text();
  if (!reply.ok) throw new Error(`${method} ${rest}: ${reply.status} ${text.slice(0, 500)}`);
  return text;
}

let service;
try {
  // Provision (admin init: the database and its log key), then seed with the service stopped.
  service = await startServe({ db, cpu: SERVER_CPU, logFile: serveLog });
  const { workspaceId } = service.info;
  await service.stop();
  progress(`seeding ${N - A} evidence records`);
  await runChild(join(LIB_DIR, 'seed-evidence.mjs'), ['--db', db, '--workspace', workspaceId, '--count', String(N - A)], {
    timeoutMs: STEP_TIMEOUT_MS,
    logFile: join(run.dir, 'seed.log'),
  });
  service = await startServe({ db, cpu: SERVER_CPU, logFile: serveLog, timeoutMs: STEP_TIMEOUT_MS });

  progress(`posting ${A} signed attestations`);
  const core = await import(DIST.core);
  const { key } = core.SigningKey.generate();
  const attestations = signedAttestations(core, key, workspaceId, A);
  for (let at = 0; at < A; at += 1000) {
    const result = JSON.parse(await request(service, 'POST', 'attestations/batch', { records: attestations.slice(at, at + 1000) }));
    const rejected = (result.results ?? []).filter((/** @type {{ status: string }} */ r) => r.status !== 'accepted');
    if (rejected.length > 0) throw new Error(`attestations rejected: ${JSON.stringify(rejected[0])}`);
  }

  // the log holds the records and the workspace's gate policy changes (its defaults, at least)
  const leaves = N + JSON.parse(await request(service, 'GET', 'grc/gates/policy')).changes.length;
  progress(`waiting for the log to cover ${leaves} leaves`);
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    const size = Number((await request(service, 'GET', 'ledger/checkpoint')).split('\n')[1]);
    if (size === leaves) break;
    if (size > leaves) throw new Error(`the log holds ${size} leaves, more than the ${leaves} written`);
    if (Date.now() > deadline) throw new Error(`the log covers ${size} of ${leaves} leaves after 5 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const ledgerKey = (await request(service, 'GET', 'ledger/key')).trim();

  progress(`govctl ledger audit --json of ${N} records`);
  const before = logLines();
  const audit = await timedGovctl(['ledger', 'audit', '--json'], {
    SERVICE_BASE_URL: service.info.url,
    SERVICE_API_KEY: service.info.apiKey,
    SERVICE_WORKSPACE_ID: workspaceId,
    GOVCTL_LEDGER_KEY: ledgerKey,
  });
  // the request log is written as requests finish; give it a moment to reach the file
  await new Promise((resolve) => setTimeout(resolve, 500));
  const requests = logLines() - before;
  let verdict;
  try {
    verdict = JSON.parse(audit.stdout);
  } catch {
    throw new Error(`ledger audit printed no JSON (exit ${audit.code}): ${audit.stderr}`);
  }
  if (audit.code !== 0 || verdict.verified !== true || verdict.records !== N) {
    throw new Error(
      `ledger audit did not verify all ${N} records (exit ${audit.code}, ${verdict.records} records): ${JSON.stringify(verdict.problems?.slice(0, 5))} ${audit.stderr}`,
    );
  }
  const rate = N / audit.seconds;
  report.result({
    name: 'ledger_audit_rate',
    value: rate,
    unit: 'records/s',
    baselineValue: TARGET_RATE,
    baselineLabel: `limit ${TARGET_RATE} records/s`,
    target: 1,
    op: '>=',
  });
  report.result({
    name: 'ledger_audit_peak_rss',
    value: audit.peakRss / 1e6,
    unit: 'MB',
    baselineValue: TARGET_RSS / 1e6,
    baselineLabel: `limit ${TARGET_RSS / 1e6} MB`,
    target: 1,
    op: '<',
  });
  report.figure('ledger_audit_seconds', audit.seconds, 's', {
    note: `${verdict.evidence} evidence, ${verdict.attestations} attestations, whole process (start-up included)`,
  });
  report.figure('ledger_audit_requests', requests, 'requests', { note: 'lines of the service request log during the audit' });
  const serviceMemory = memoryOf(service.pid);
  if (serviceMemory?.hwm) report.figure('service_peak_rss', serviceMemory.hwm / 1e6, 'MB');
} catch (error) {
  report.failed('ledger_audit_rate', error instanceof Error ? error.message : String(error));
  process.stderr.write(`bench/ledger-audit: ${error instanceof Error ? error.stack : error}\n`);
} finally {
  await service?.stop();
}
const code = report.finish();
if (code === 0 && !options.keep) run.cleanup();
else process.stderr.write(`run files kept in ${run.dir}\n`);
process.exitCode = code;
