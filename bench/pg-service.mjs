#!/usr/bin/env node
/**
 * The service on PostgreSQL against the service on SQLite, measured in the same run, and two
 * replicas on one PostgreSQL database.
 *
 *   node bench/pg-service.mjs [--seconds S] [--rounds R] [--connections C]
 *
 * Starts a throw-away PostgreSQL cluster (test/helpers/postgres-cluster.mjs: fsync and
 * synchronous_commit on) and the real `govctl serve` twice: on a SQLite file and on the cluster,
 * each pinned to the server core (bench/README.md), PostgreSQL itself unpinned. For each shape —
 * evidence POST (one record), a signed attestation POST (each body sent once), an evidence batch
 * POST of 100 records — it loads the two services in R interleaved slices of S seconds and prints
 * both rates and the ratio PostgreSQL / SQLite (target for evidence POST ≥ 0.5).
 *
 * Then a second replica joins the first on PostgreSQL (both unpinned, as a 2-core machine runs
 * them) and the evidence POST load is split over the two: the combined rate, and the CPU time per
 * request of each replica and of PostgreSQL (all its processes), from /proc.
 * Build first: `node scripts/build.mjs --no-types`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import { startCluster } from '../test/helpers/postgres-cluster.mjs';
import { DIST, SERVER_CPU, cpuSecondsOf, pinLoadGenerator, progress, requireBuild } from './lib/harness.mjs';
import { runLoad, mergeLoads } from './lib/load.mjs';
import { evidenceBodies, evidenceRecords, signedAttestations } from './lib/records.mjs';
import { startServe } from './lib/serve.mjs';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '5' }, rounds: { type: 'string', default: '3' }, connections: { type: 'string', default: '10' } },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);
const TARGET = 0.5;

requireBuild(DIST.core, DIST.bin);
const core = await import(pathToFileURL(DIST.core).href);
pinLoadGenerator(false);
const dir = mkdtempSync(join(tmpdir(), 'govctl-bench-pg-'));
const cluster = await startCluster();
const services = [];
const summary = {};

/** CPU seconds of the PostgreSQL cluster: the postmaster and every process it started. */
function postgresCpu() {
  let total = cpuSecondsOf(cluster.pid) ?? 0;
  let children = [];
  try {
    children = execFileSync('pgrep', ['-P', String(cluster.pid)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    // none
  }
  for (const pid of children) total += cpuSecondsOf(pid) ?? 0;
  return total;
}

try {
  const url = await cluster.createDatabase('bench');
  const logKey = join(dir, 'ledger-key');
  progress('starting govctl serve on SQLite and on PostgreSQL');
  const sqlite = await startServe({ db: join(dir, 'bench.db'), cpu: SERVER_CPU, logFile: join(dir, 'sqlite.log') });
  services.push(sqlite);
  const pg = await startServe({ db: url, cpu: SERVER_CPU, logFile: join(dir, 'pg.log'), identityFile: join(dir, 'pg.identity.json'), logKey });
  services.push(pg);
  const targets = { sqlite, postgres: pg };

  const { key } = core.SigningKey.generate();
  const BATCH = 100;
  const batchBodies = Array.from({ length: 50 }, (_, i) => Buffer.from(JSON.stringify({ records: evidenceRecords(BATCH, { seed: i }) })));
  const shapes = {
    evidence: { path: 'grc/evidence', bodies: () => evidenceBodies(200), per: 1 },
    attestation: {
      path: 'attestations/external',
      // signed for each workspace, each body sent once (a replayed signature is refused)
      bodies: (service) => signedAttestations(core, key, service.info.workspaceId, 4000 * SECONDS * ROUNDS).map((a) => Buffer.from(JSON.stringify(a))),
      per: 1,
      once: true,
    },
    evidence_batch: { path: 'grc/evidence/batch', bodies: () => batchBodies, per: BATCH },
  };
  for (const [shape, spec] of Object.entries(shapes)) {
    const slices = { sqlite: [], postgres: [] };
    const bodies = Object.fromEntries(Object.entries(targets).map(([name, service]) => [name, spec.bodies(service)]));
    const next = { sqlite: 0, postgres: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of round % 2 === 0 ? ['sqlite', 'postgres'] : ['postgres', 'sqlite']) {
        const service = targets[name];
        progress(`${shape}: ${name}, slice ${round + 1}/${ROUNDS}`);
        const result = await runLoad({
          url: service.info.url,
          path: `/api/workspaces/${service.info.workspaceId}/governance/${spec.path}`,
          headers: { authorization: `Bearer ${service.info.apiKey}` },
          bodies: bodies[name],
          firstBody: spec.once ? next[name] : 0,
          connections: CONNECTIONS,
          durationS: SECONDS,
          maxRequests: spec.once ? Math.floor(bodies[name].length / ROUNDS) - CONNECTIONS : 10_000_000,
          serverPid: service.pid,
        });
        if (spec.once) next[name] += result.bodiesSent;
        slices[name].push(result);
      }
    }
    const merged = { sqlite: mergeLoads(slices.sqlite), postgres: mergeLoads(slices.postgres) };
    const rate = (r) => Math.round(r.rps * spec.per);
    const ratio = merged.postgres.rps / merged.sqlite.rps;
    const unit = spec.per === 1 ? 'req/s' : 'records/s';
    const verdict = shape === 'evidence' ? (ratio >= TARGET ? ` target ≥ ${TARGET} PASS` : ` target ≥ ${TARGET} FAIL`) : '';
    console.log(`${shape}_rate: postgres ${rate(merged.postgres)} ${unit}, sqlite ${rate(merged.sqlite)} ${unit} (ratio ${ratio.toFixed(2)})${verdict}`);
    console.log(`  non-2xx: postgres ${merged.postgres.non2xx}, sqlite ${merged.sqlite.non2xx}; p50 ms: postgres ${merged.postgres.latency.p50.toFixed(2)}, sqlite ${merged.sqlite.latency.p50.toFixed(2)}`);
    summary[shape] = { postgres: rate(merged.postgres), sqlite: rate(merged.sqlite), ratio: Number(ratio.toFixed(2)), unit };
  }

  // --- two replicas on one PostgreSQL database -------------------------------------------------
  await sqlite.stop();
  services.splice(services.indexOf(sqlite), 1);
  await pg.stop();
  services.splice(services.indexOf(pg), 1);
  progress('two replicas on PostgreSQL, unpinned');
  const replicas = [];
  for (const n of [1, 2]) {
    const replica = await startServe({ db: url, logFile: join(dir, `replica-${n}.log`), identityFile: join(dir, 'pg.identity.json'), logKey });
    services.push(replica);
    replicas.push(replica);
  }
  const bodies = evidenceBodies(200);
  const cpuBefore = { replicas: replicas.map((r) => cpuSecondsOf(r.pid)), postgres: postgresCpu() };
  const results = await Promise.all(
    replicas.map((replica) =>
      runLoad({
        url: replica.info.url,
        path: `/api/workspaces/${replica.info.workspaceId}/governance/grc/evidence`,
        headers: { authorization: `Bearer ${replica.info.apiKey}` },
        bodies,
        connections: Math.max(1, Math.floor(CONNECTIONS / 2)),
        durationS: SECONDS * ROUNDS,
        maxRequests: 10_000_000,
      }),
    ),
  );
  const requests = results.reduce((n, r) => n + r.ok, 0);
  const rate = results.reduce((n, r) => n + r.rps, 0);
  const cpuPer = (before, after) => (after === null || before === null ? null : ((after - before) / requests) * 1e6);
  const replicaCpu = replicas.map((r, i) => cpuPer(cpuBefore.replicas[i], cpuSecondsOf(r.pid)));
  const postgresCpuPer = cpuPer(cpuBefore.postgres, postgresCpu());
  console.log(`two_replicas_evidence_rate: ${Math.round(rate)} req/s (${results.map((r) => Math.round(r.rps)).join(' + ')}), non-2xx ${results.reduce((n, r) => n + r.non2xx, 0)}`);
  console.log(`  CPU per request: replicas ${replicaCpu.map((c) => `${Math.round(c)} µs`).join(', ')}; PostgreSQL ${Math.round(postgresCpuPer)} µs`);
  summary.two_replicas = { rate: Math.round(rate), replica_cpu_us_per_request: replicaCpu.map((c) => Math.round(c)), postgres_cpu_us_per_request: Math.round(postgresCpuPer) };
  console.log(JSON.stringify({ seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS, ...summary }));
} finally {
  for (const service of services) await service.stop().catch(() => {});
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}
