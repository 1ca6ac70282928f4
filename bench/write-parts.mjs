#!/usr/bin/env node
/**
 * What each mechanism of the write path costs on its own: µs of this process's CPU
 * (process.cpuUsage) per call, each measured in many short slices interleaved with the others,
 * median and range. The store's own modules are bundled from src/ with esbuild for the run (the
 * built package exports none of them).
 *
 * Why: bench/write-cost.mjs measures a whole write against another build, but on a shared machine
 * its slices move by ±10–20 %, more than any one of these mechanisms costs (a few µs of a write's
 * ~150–300 µs). Each is small; this says how small, in the same units, so that the sum can be
 * compared with write-cost's gap.
 *
 *   node bench/write-parts.mjs            # 8 rounds
 *   node bench/write-parts.mjs --rounds 12
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { ROOT, parseOptions, positiveNumber, progress, runDirectory } from './lib/harness.mjs';

const USAGE = `node bench/write-parts.mjs [--rounds R] [--keep]
  --rounds R   measured slices per mechanism, interleaved (default 8; the first two are warm-up)
  --keep       keep the run's database`;
const options = parseOptions({ rounds: { type: 'string' }, keep: { type: 'boolean', default: false } }, USAGE);
const rounds = positiveNumber(options.rounds, 'rounds', 8) + 2;
const run = runDirectory('write-parts', options['data-dir']);

// The store's modules and core, bundled from the source tree for this run.
const entry = join(run.dir, 'entry.ts');
const bundle = join(run.dir, 'bundle.mjs');
const src = (path) => JSON.stringify(join(ROOT, 'src', path));
await build({
  stdin: {
    contents: [
      `export { openSqliteStore } from ${src('server/store/sqlite/store.ts')};`,
      `export { attestationSha256, evidenceSha256, signatureFacts } from ${src('server/store/record-views.ts')};`,
      `export * as core from ${src('core/index.ts')};`,
    ].join('\n'),
    resolveDir: ROOT,
    sourcefile: entry,
    loader: 'ts',
  },
  bundle: true,
  format: 'esm',
  platform: 'node',
  packages: 'external',
  outfile: bundle,
  logLevel: 'error',
});
// Its packages stay imports: they resolve from the run directory up to this tree's node_modules.
const { openSqliteStore, attestationSha256, evidenceSha256, signatureFacts, core } = await import(pathToFileURL(bundle).href);

const dbPath = join(run.dir, 'parts.db');
const { key } = core.SigningKey.generate();
const store = openSqliteStore(dbPath, { ledger: { key } });
const workspaceId = (await store.identity.provision({}, Date.now())).workspace_id;
const db = store.db;

// ---- inputs: one signed attestation row as the route builds it, one evidence row ----------------
const nowIso = new Date().toISOString();
const record = core.buildAttestation({
  systemName: 'bench-system-1',
  agentName: 'bench-agent',
  toolName: 'tool-1',
  inputHash: core.sha256Hex('in'),
  outputHash: core.sha256Hex('out'),
  executedAt: nowIso,
  modelId: 'model-1',
  authorisedBy: { identity: 'ci-bot@example.com', role: 'pipeline', sessionId: 'run-1' },
});
const signed = { ...record, ...core.signWitness(record, workspaceId, key) };
const texts = core.witnessTexts(signed, workspaceId);
const job = core.witnessJob(signed, workspaceId, texts.message);
const attestationRow = {
  attestation_id: store.newId('att'),
  workspace_id: workspaceId,
  system_name: record.system_name,
  agent_name: record.agent_name,
  tool_name: record.tool_name,
  input_hash: record.input_hash,
  output_hash: record.output_hash,
  executed_at: record.executed_at,
  executed_ms: Date.parse(record.executed_at),
  record: texts.stored,
  witness_form: 'canonical',
  witness_sig: Buffer.from(signed.witness_sig, 'hex'),
  signed_ms: Date.parse(record.executed_at),
  key_fingerprint: core.keyFingerprint(signed.verifying_key_hex),
  trust_tier: 'witnessed',
  tier_reason: null,
  source: 'sdk',
  received_at: nowIso,
  received_ms: Date.parse(nowIso),
};
const withFacts = { ...attestationRow, signature_facts: signatureFacts(signed, job, 'canonical') };
if (attestationSha256(withFacts) !== attestationSha256(attestationRow)) throw new Error('the write path digest differs from the stored record’s');
const evidenceRow = (recordId) => ({
  record_id: recordId,
  workspace_id: workspaceId,
  record_type: 'model_evaluation',
  system_name: 'bench-system-1',
  identity: 'ci@example.com',
  resource: 'model-x',
  environment: 'prod',
  occurred_at: nowIso,
  occurred_ms: Date.parse(nowIso),
  payload: '{"dataset":"holdout-v3","metric":"accuracy","notes":"nightly run","value":0.93}',
  client_sig: null,
  client_sig_algo: null,
  source: 'sdk',
  mapped_controls: '["eu_ai_act:art_9","iso_42001:6.1.2"]',
  received_at: nowIso,
  received_ms: Date.parse(nowIso),
});
const oneEvidence = evidenceRow(store.newId('rec'));
const entry0 = { kind: 'evidence', id: oneEvidence.record_id, workspace_id: workspaceId, received_at: nowIso, sha256: 'a'.repeat(64) };

// The statements each mechanism runs, as their modules prepare them.
const dataVersion = db.prepare('PRAGMA data_version').pluck();
const policy = db.prepare('SELECT policy FROM witness_policy WHERE workspace_id = ?').pluck();
const aggregates = db.prepare('SELECT record_types, controls FROM systems WHERE workspace_id = ? AND name = ?');
await store.recordEvidence({ row: evidenceRow(store.newId('rec')), controls: [] });
const { statSync } = await import('node:fs');

/** Per call, µs. */
const calls = {
  'attestation leaf digest, stored record read back': () => attestationSha256(attestationRow),
  'attestation leaf digest, with the route’s facts': () => attestationSha256(withFacts),
  'evidence leaf digest': () => evidenceSha256(oneEvidence),
  'ledger entry text': () => Buffer.from(core.ledgerEntry(entry0)),
  'PRAGMA data_version (every request)': () => dataVersion.get(),
  'key policy read (every attestation request)': () => policy.get(workspaceId),
  'systems aggregates read (a system per group)': () => aggregates.get(workspaceId, 'bench-system-1'),
  'stat of the database file (a group)': () => statSync(dbPath),
  'key fingerprint (a signed attestation)': () => core.keyFingerprint(signed.verifying_key_hex),
};

// A group of ten 600-byte rows, with and without ten log leaves (their row and by-record index).
db.exec('CREATE TABLE bench_rows (k INTEGER PRIMARY KEY, b BLOB)');
const insertRow = db.prepare('INSERT INTO bench_rows (b) VALUES (?)');
const insertLeaf = db.prepare('INSERT INTO ledger_leaves (leaf_key, ws_key, leaf_index, kind, record_id, entry) VALUES ((? << 40) + ?, ?, ?, ?, ?, ?)');
const blob = Buffer.alloc(600, 7);
const entryBytes = Buffer.from(core.ledgerEntry(entry0));
const benchWs = 1000; // a ws_key no workspace of this database has: these leaves are never integrated
let leaf = 0;
const groupOf = (withLeaves) =>
  db.transaction(() => {
    for (let i = 0; i < 10; i++) {
      insertRow.run(blob);
      if (withLeaves) insertLeaf.run(benchWs, leaf, benchWs, leaf, 'evidence', `rec_${String(leaf++).padStart(36, '0')}`, entryBytes);
    }
  });
const groups = { plain: groupOf(false), leaves: groupOf(true) };

const samples = {};
const note = (name, us) => (samples[name] ??= []).push(us);
for (let round = 0; round < rounds; round += 1) {
  progress(`round ${round + 1} of ${rounds}`);
  for (const [name, fn] of Object.entries(calls)) {
    const before = process.cpuUsage();
    for (let i = 0; i < 20_000; i++) fn();
    const used = process.cpuUsage(before);
    if (round >= 2) note(name, (used.user + used.system) / 20_000);
  }
  for (const [name, group] of Object.entries(groups)) {
    const before = process.cpuUsage();
    for (let i = 0; i < 200; i++) group();
    const used = process.cpuUsage(before);
    if (round >= 2) note(`group of ten rows${name === 'leaves' ? ' and ten log leaves' : ''}, per write`, (used.user + used.system) / 2000);
  }
  // Integration as the timer does it: about a tick's worth of leaves (500) at once.
  for (let g = 0; g < 50; g++)
    await Promise.all(Array.from({ length: 10 }, () => store.recordEvidence({ row: evidenceRow(store.newId('rec')), controls: [] })));
  const before = process.cpuUsage();
  const integrated = await store.ledger.integrate();
  const used = process.cpuUsage(before);
  if (round >= 2) note('integration, per leaf (500 a tick, one checkpoint signed)', (used.user + used.system) / integrated);
}
await store.close();

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
const result = {};
for (const [name, values] of Object.entries(samples)) {
  result[name] = {
    median: Math.round(median(values) * 100) / 100,
    min: Math.round(Math.min(...values) * 100) / 100,
    max: Math.round(Math.max(...values) * 100) / 100,
  };
  console.log(`${name.padEnd(60)} ${result[name].median.toFixed(2).padStart(7)} µs (${result[name].min.toFixed(2)}–${result[name].max.toFixed(2)})`);
}
console.log(JSON.stringify(result));
if (!options.keep) rmSync(run.dir, { recursive: true, force: true });
else progress(`run files kept in ${run.dir}`);
