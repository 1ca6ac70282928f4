/**
 * The install recipe of docs/ci.md, as far as it runs here: `npm pack` makes the package a
 * pipeline installs, and the `govctl` inside it runs. Installing the tarball with npm needs the
 * registry for govctl's dependencies (the tests run offline), so the repository's node_modules stand
 * in for them, and the bin link that `npm install --global` / `npm link` would make is made by hand.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, makeHome, makeTempDir, REPO } from '../helpers/cli.js';

const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
let packDir: string;
let files: { path: string; mode: number }[];

beforeAll(async () => {
  packDir = makeTempDir('govctl-pack-');
  // --ignore-scripts: the package as built (the suite's global setup built dist/); a pipeline's
  // `npm pack` runs the build first through `prepare`.
  const packed = await execa('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packDir], { cwd: REPO, timeout: 60_000, reject: false });
  expect(packed.exitCode, packed.stderr).toBe(0);
  const [report] = JSON.parse(packed.stdout) as { filename: string; files: { path: string; mode: number }[] }[];
  expect(report!.filename).toBe(`govctl-${version}.tgz`);
  files = report!.files;
  execFileSync('tar', ['-xzf', join(packDir, report!.filename), '-C', packDir], { timeout: 30_000 });
}, 90_000);

describe('docs/ci.md install recipe', () => {
  it('keeps the published install only as the line for "once published"', () => {
    const doc = readFileSync(join(REPO, 'docs', 'ci.md'), 'utf8');
    const published = doc.split('\n').filter((line) => /npm install --global govctl@/.test(line));
    expect(published.length).toBeGreaterThan(0);
    for (const line of published) expect(line).toMatch(/once govctl is published|not on npm yet|once published|replaces the tarball/i);
    expect(doc).toContain(`npm install --global ./vendor/govctl-${version}.tgz`);
  });

  it('packs what a pipeline needs, and none of the sources or tests', () => {
    const paths = files.map((file) => file.path);
    for (const needed of ['package.json', 'bin/govctl.js', 'dist/cli/main.js', 'dist/cli/help.txt', 'README.md', 'docs/ci.md']) expect(paths).toContain(needed);
    expect((files.find((file) => file.path === 'bin/govctl.js')!.mode & 0o111) !== 0).toBe(true);
    expect(paths.filter((path) => path.startsWith('src/') || path.startsWith('test/') || path.startsWith('node_modules/'))).toEqual([]);
  });

  it('packs no chunk of an earlier build: every chunk is imported by an entry point or another chunk', () => {
    const pkg = join(packDir, 'package');
    const code = files.filter((file) => file.path.endsWith('.js')).map((file) => ({ path: file.path, text: readFileSync(join(pkg, file.path), 'utf8') }));
    const chunks = code.filter((file) => file.path.startsWith('dist/chunks/'));
    expect(chunks.length).toBeGreaterThan(0);
    const orphans = chunks.filter((chunk) => {
      const name = chunk.path.slice('dist/chunks/'.length);
      return !code.some((other) => other.path !== chunk.path && other.text.includes(name));
    });
    expect(orphans.map((chunk) => chunk.path)).toEqual([]);
  });

  it('installs as a `govctl` on the PATH that runs: --version, version --json, a local-store command', async () => {
    const pkg = join(packDir, 'package');
    symlinkSync(join(REPO, 'node_modules'), join(pkg, 'node_modules'));
    const bin = join(packDir, 'prefix', 'bin');
    mkdirSync(bin, { recursive: true });
    symlinkSync(join(pkg, 'bin', 'govctl.js'), join(bin, 'govctl'));
    expect(statSync(join(bin, 'govctl')).mode & 0o111).not.toBe(0);
    const home = makeHome();
    const env = { ...cleanEnv(home), PATH: `${bin}:${process.env.PATH ?? ''}` };
    const run = (args: string[]) => execa('govctl', args, { cwd: home, env, extendEnv: false, reject: false, timeout: 30_000 });

    expect((await run(['--version'])).stdout).toBe(version);
    const report = JSON.parse((await run(['version', '--json'])).stdout) as { version: string; node: string };
    expect(report).toMatchObject({ version, node: process.version });
    const listed = await run(['evidence', 'list', '--json']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ records: [] });
  });
});
