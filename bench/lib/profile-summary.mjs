#!/usr/bin/env node
// @ts-check
/**
 * Where the time goes in a V8 CPU profile (`node --cpu-prof`, e.g. `bench/server.mjs --cpu-prof`):
 * self time per function and per area (package, govctl source file, Node internals, GC, idle).
 *
 *   node bench/lib/profile-summary.mjs <file.cpuprofile> [--top N] [--sourcemap]
 *
 * Functions in govctl's bundle are named by their bundle position; with --sourcemap the linked
 * .map next to the bundle (esbuild writes one) maps them back to src/ files.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: { top: { type: 'string', default: '25' }, sourcemap: { type: 'boolean', default: true } },
  allowPositionals: true,
});
if (positionals.length !== 1) {
  process.stderr.write('usage: node bench/lib/profile-summary.mjs <file.cpuprofile> [--top N]\n');
  process.exit(2);
}

const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
/** @typedef {{ id: number, callFrame: { url: string, functionName: string, lineNumber: number }, children?: number[] }} ProfileNode */
/** @type {Map<number, ProfileNode>} */
const nodes = new Map(profile.nodes.map((/** @type {ProfileNode} */ n) => [n.id, n]));
/** @type {Map<number, number>} */
const selfUs = new Map();
const deltas = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i += 1) {
  const id = profile.samples[i];
  selfUs.set(id, (selfUs.get(id) ?? 0) + (deltas[i] ?? 0));
}
const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);

// --- source maps (esbuild's linked .map): bundle line → original source file -------------------
const maps = new Map();
/** @param {string} text */
function decodeVlq(text) {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const out = [];
  let value = 0;
  let shift = 0;
  for (const c of text) {
    const digit = chars.indexOf(c);
    value += (digit & 31) << shift;
    if (digit & 32) shift += 5;
    else {
      out.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return out;
}
/** @param {string} url */
function sourceMapFor(url) {
  if (!values.sourcemap || !url.startsWith('file://')) return null;
  if (maps.has(url)) return maps.get(url);
  let lines = null;
  const path = `${fileURLToPath(url)}.map`;
  if (existsSync(path)) {
    const map = JSON.parse(readFileSync(path, 'utf8'));
    lines = [];
    let source = 0;
    for (const line of map.mappings.split(';')) {
      let first = null;
      for (const segment of line.split(',')) {
        if (!segment) continue;
        const fields = decodeVlq(segment);
        if (fields.length >= 4) {
          source += fields[1];
          first ??= map.sources[source];
        }
      }
      lines.push(first);
    }
  }
  maps.set(url, lines);
  return lines;
}

/** @param {ProfileNode} node */
function area(node) {
  const { url, functionName, lineNumber } = node.callFrame;
  if (!url) return functionName.startsWith('(') ? functionName : `native ${functionName || '(anonymous)'}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 14).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const lines = sourceMapFor(url);
  const source = lines?.[lineNumber];
  if (source) return source.replace(/^(\.\.\/)+/, '');
  return url.replace(/^file:\/\//, '').replace(/^.*\/(dist\/)/, '$1');
}

const byFunction = new Map();
const byArea = new Map();
for (const [id, us] of selfUs) {
  const node = nodes.get(id);
  if (node === undefined) continue;
  const where = area(node);
  const name = `${node.callFrame.functionName || '(anonymous)'}  [${where}${node.callFrame.url ? `:${node.callFrame.lineNumber + 1}` : ''}]`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  byArea.set(where, (byArea.get(where) ?? 0) + us);
}

const top = Number(values.top);
const pct = (/** @type {number} */ us) => `${((100 * us) / totalUs).toFixed(1).padStart(5)}%`;
const busy = totalUs - (byArea.get('(idle)') ?? 0);
process.stdout.write(`profile: ${(totalUs / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s not idle\n\nself time by area:\n`);
for (const [name, us] of [...byArea].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${pct(us)}  ${name}\n`);
process.stdout.write('\nself time by function:\n');
for (const [name, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${pct(us)}  ${name}\n`);
