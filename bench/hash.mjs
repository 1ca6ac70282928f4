#!/usr/bin/env node
// @ts-check
/**
 * Attestation hashing throughput against `openssl dgst -sha256`, measured in the same run.
 *
 *   node bench/hash.mjs [size]        size: bytes, or with a suffix K, M, G (default 1G)
 *
 * Writes a file of `size` bytes into a temporary directory, then hashes it alternately with
 * openssl and with core's sha256Stream over fs.createReadStream (4 MiB chunks, as `govctl attest
 * --input FILE` does), three times each, and compares the best runs. The file was just written, so
 * both read it from the page cache: this measures hashing, not the disk.
 *
 * One line: both throughputs, the ratio, target ≥ 0.85, PASS/FAIL (exit code 1 on FAIL).
 * Loads dist/lib/core.js (run `node scripts/build.mjs --no-types` first; GOVCTL_BENCH_CODE points elsewhere).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, openSync, closeSync, writeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DIST, requireBuild } from './lib/harness.mjs';

const TARGET = 0.85;
const RUNS = 3;
const CHUNK = 4 * 1024 * 1024;

/** @param {string | undefined} text */
function parseSize(text) {
  const match = /^(\d+(?:\.\d+)?)([KMG]i?B?)?$/i.exec(text ?? '1G');
  if (!match) throw new Error(`size must be bytes or a number with K, M or G, got "${text}"`);
  /** @type {Record<string, number>} */
  const units = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };
  const unit = units[(match[2] ?? '').charAt(0).toLowerCase()];
  return Math.floor(Number(match[1]) * unit);
}

const size = parseSize(process.argv[2]);
requireBuild(DIST.core);
const { sha256Stream } = await import(pathToFileURL(DIST.core).href);
const probe = spawnSync('openssl', ['version'], { encoding: 'utf8' });
if (probe.status !== 0) throw new Error('openssl is not installed: it is the baseline of this benchmark');

const dir = mkdtempSync(join(tmpdir(), 'govctl-bench-hash-'));
const file = join(dir, 'input.bin');
try {
  // Random 16 MiB block, repeated: incompressible enough, and fast to write.
  const block = randomBytes(16 * 1024 * 1024);
  const fd = openSync(file, 'w');
  for (let written = 0; written < size;) {
    const n = Math.min(block.length, size - written);
    writeSync(fd, block, 0, n);
    written += n;
  }
  closeSync(fd);

  const openssl = () => {
    const started = process.hrtime.bigint();
    const result = spawnSync('openssl', ['dgst', '-sha256', '-r', file], { encoding: 'utf8', maxBuffer: 1024 * 1024 });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (result.status !== 0) throw new Error(`openssl dgst failed: ${result.stderr}`);
    return { seconds, hash: result.stdout.split(/\s/)[0] };
  };
  const ours = async () => {
    const started = process.hrtime.bigint();
    const { hash, bytes } = await sha256Stream(createReadStream(file, { highWaterMark: CHUNK }));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (bytes !== size) throw new Error(`sha256Stream read ${bytes} bytes, expected ${size}`);
    return { seconds, hash };
  };

  const best = { openssl: Infinity, ours: Infinity };
  for (let run = 0; run < RUNS; run++) {
    const a = openssl();
    const b = await ours();
    if (a.hash !== b.hash) throw new Error(`hashes differ: openssl ${a.hash}, sha256Stream ${b.hash}`);
    best.openssl = Math.min(best.openssl, a.seconds);
    best.ours = Math.min(best.ours, b.seconds);
  }
  const mb = (/** @type {number} */ seconds) => size / seconds / 1e6;
  const ratio = mb(best.ours) / mb(best.openssl);
  const pass = ratio >= TARGET;
  process.stdout.write(
    `hash ${(size / 1024 ** 2).toFixed(0)} MiB: sha256Stream ${mb(best.ours).toFixed(0)} MB/s, openssl dgst -sha256 ${mb(best.openssl).toFixed(0)} MB/s, ` +
      `ratio ${ratio.toFixed(2)} (target ≥ ${TARGET}, best of ${RUNS}) ${pass ? 'PASS' : 'FAIL'}\n`,
  );
  process.exitCode = pass ? 0 : 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
