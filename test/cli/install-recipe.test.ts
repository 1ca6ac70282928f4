/**
 * The install recipe of docs/ci.md, as far as it runs here: `npm pack` makes the package a
 * pipeline installs, and the `govctl` inside it runs. Installing the tarball with npm needs the
 * registry for govctl's dependencies (the tests run offline), so the repository's node_modules stand
 * in for them, and the bin link that `npm install --global` / `npm link` would make is made by hand.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { builtinModules } from 'node:module';
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
  expect(report.filename).toBe(`govctl-${version}.tgz`);
  files = report.files;
  execFileSync('tar', ['-xzf', join(packDir, report.filename), '-C', packDir], { timeout: 30_000 });
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
    for (const needed of ['package.json', 'bin/govctl.js', 'dist/cli/main.js', 'dist/cli/service.js', 'README.md', 'docs/ci.md']) expect(paths).toContain(needed);
    expect((files.find((file) => file.path === 'bin/govctl.js')!.mode & 0o111) !== 0).toBe(true);
    expect(paths.filter((path) => path.startsWith('src/') || path.startsWith('test/') || path.startsWith('node_modules/'))).toEqual([]);
  });

  it('declares as a dependency every package its type declarations import, so that a TypeScript user installs nothing more', () => {
    const manifest = JSON.parse(readFileSync(join(packDir, 'package', 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    const dependencies = new Set(Object.keys(manifest.dependencies ?? {}));
    const imported = new Set<string>();
    for (const file of files.filter((entry) => entry.path.endsWith('.d.ts'))) {
      const text = readFileSync(join(packDir, 'package', file.path), 'utf8');
      for (const [, specifier] of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*)['"]([^'"]+)['"]/g)) {
        if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(specifier) || specifier.split('/')[0] === 'govctl') continue;
        imported.add(
          specifier
            .split('/')
            .slice(0, specifier.startsWith('@') ? 2 : 1)
            .join('/'),
        );
      }
    }
    expect(imported.size).toBeGreaterThan(0);
    /** A package that carries its own declarations: `types`/`typings`, an index.d.ts, or types in its exports. */
    const ownTypes = (name: string) => {
      const own = JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as Record<string, unknown>;
      return (
        Boolean(own.types ?? own.typings) || existsSync(join(REPO, 'node_modules', name, 'index.d.ts')) || JSON.stringify(own.exports ?? {}).includes('"types"')
      );
    };
    const typesPackage = (name: string) => `@types/${name.startsWith('@') ? name.slice(1).replace('/', '__') : name}`;
    const missing = [...imported].filter((name) => !dependencies.has(name) || (!ownTypes(name) && !dependencies.has(typesPackage(name))));
    expect(missing).toEqual([]);
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
