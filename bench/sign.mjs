#!/usr/bin/env node
/**
 * client_sig signing rate: canonicalise + HMAC-SHA256 of ~1 KiB evidence records (docs/wire-format.md "client_sig"), as
 * the client and `govctl evidence sign` do for every record.
 *
 *   node bench/sign.mjs [seconds]     (default 3)
 *
 * Signs distinct records (ai_risk_assessment and model_evaluation, ~1 KiB of JSON each) with
 * core's signClientSig for about `seconds`, after a short warm-up. One line: records/s, the
 * ratio to the target of 50 000 records/s (PASS/FAIL, exit code 1 on FAIL), and for context the
 * rate of plain JSON.stringify + HMAC over the same records in the same run (which is not
 * Python-compatible, so not a substitute).
 * Loads dist/lib/core.js (run `node scripts/build.mjs --no-types` first; GOVCTL_BENCH_CODE points elsewhere).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { DIST, requireBuild } from './lib/harness.mjs';
import { modelEvaluation, riskAssessment } from './lib/records.mjs';

const TARGET = 50_000;
const seconds = Number(process.argv[2] ?? 3);
if (!(seconds > 0 && seconds <= 60)) throw new Error('seconds must be between 0 and 60');

requireBuild(DIST.core);
const { SigningKey, signClientSig, canonicalize } = await import(pathToFileURL(DIST.core).href);
const hex = randomBytes(32).toString('hex');
const key = SigningKey.fromHex(hex);
const workspace = 'ws_bench';
const occurredAt = '2026-02-01T10:00:00.000Z';
const records = Array.from({ length: 2000 }, (_, i) => (i % 2 === 0 ? riskAssessment(i, { occurredAt }) : modelEvaluation(i, { occurredAt })));
const meanBytes = records.reduce((sum, record) => sum + Buffer.byteLength(canonicalize(record)), 0) / records.length;

/** Runs `sign` over the records for `budget` seconds; returns records per second. */
function rate(sign, budget) {
  let count = 0;
  let sink = 0;
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(Math.round(budget * 1e9));
  let now = started;
  while (now < deadline) {
    for (let i = 0; i < 500; i++) sink += sign(records[(count + i) % records.length]).length;
    count += 500;
    now = process.hrtime.bigint();
  }
  if (sink === 0) throw new Error('nothing signed');
  return count / (Number(now - started) / 1e9);
}

const canonicalSign = (record) => signClientSig(record, workspace, key);
const plainSign = (record) =>
  createHmac('sha256', Buffer.from(hex, 'hex'))
    .update(
      JSON.stringify({
        occurred_at: record.occurred_at,
        payload: record.payload,
        record_type: record.record_type,
        system_name: record.system_name,
        workspace_id: workspace,
      }),
    )
    .digest('hex');

rate(canonicalSign, 0.3); // warm-up: JIT
rate(plainSign, 0.3);
const ours = rate(canonicalSign, seconds);
const plain = rate(plainSign, Math.min(1, seconds));
const ratio = ours / TARGET;
const pass = ratio >= 1;
process.stdout.write(
  `sign ~${Math.round(meanBytes)} B records: ${Math.round(ours).toLocaleString('en-US')} records/s canonicalise+HMAC, ratio ${ratio.toFixed(2)} ` +
    `to target 50,000/s ${pass ? 'PASS' : 'FAIL'} (JSON.stringify+HMAC, not canonical: ${Math.round(plain).toLocaleString('en-US')}/s, ${(ours / plain).toFixed(2)}×)\n`,
);
process.exitCode = pass ? 0 : 1;
