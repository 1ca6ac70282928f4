/**
 * What only a process shows about start-up (bin/govctl.js): `gates check` ends with the exit code a
 * CI step reads, `--version` and `--help` answer without the command line and say what it says,
 * and the V8 code cache (in $HOME/.cache/govctl) is written, used, and never changes an answer when
 * it is missing, damaged or cannot be written.
 */
import { chmodSync, copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { REPO, cleanEnv, ensureBuilt, makeHome, makeTempDir, runProcess, type CliResult, type RunCliOptions } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

beforeAll(ensureBuilt);

/** `node bin/govctl.js args…` with its code cache in the run's home, where these tests look for it. */
const runCli = (args: readonly string[], options: RunCliOptions = {}): Promise<CliResult> => runProcess(args, { ...options, codeCacheInHome: true });

let server: TestServer;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  env = { SERVICE_BASE_URL: server.url, SERVICE_API_KEY: server.apiKey };
});

afterAll(async () => {
  await server?.stop();
});

/** A port on 127.0.0.1 that nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** The cache files in a home directory. */
function caches(home: string): string[] {
  try {
    return readdirSync(join(home, '.cache', 'govctl')).sort();
  } catch {
    return [];
  }
}

/**
 * The files a run loaded (`require.cache`), recorded at its exit by a `--require`d probe.
 */
async function loadedBy(args: readonly string[]): Promise<{ exitCode: number; files: string[] }> {
  const dir = makeTempDir('govctl-loaded-');
  const probe = join(dir, 'probe.cjs');
  const out = join(dir, 'loaded.json');
  writeFileSync(
    probe,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({ files: Object.keys(require.cache) })));\n`,
  );
  const result = await runCli(args, { env: { NODE_OPTIONS: `--require ${probe}` } });
  const loaded = JSON.parse(readFileSync(out, 'utf8')) as { files: string[] };
  return { exitCode: result.exitCode, ...loaded };
}

describe('what the embedded store loads', () => {
  it('better-sqlite3 from the bundle and only its addon from node_modules (no search for it with `bindings`)', async () => {
    const run = await loadedBy(['posture', '--json', '--base-url', 'local']);
    expect(run.exitCode).toBe(0);
    const fromPackages = run.files.filter((file) => file.includes('node_modules'));
    expect(fromPackages.map((file) => file.slice(file.lastIndexOf('node_modules')))).toEqual([
      join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'),
    ]);
  });
});

describe('gates check in a CI step', () => {
  it('exits 2 when a blocking gate fails, 0 with --fail-on never, 77 on a refused key and 69 on a closed port', async () => {
    const failing = await runCli(['gates', 'check', '--json'], { env });
    expect(failing.exitCode).toBe(2);
    expect(JSON.parse(failing.stdout).gates.map((gate: { gate_id: string }) => gate.gate_id)).toContain('gate_eu_ai_act');
    expect((await runCli(['gates', 'check', '--json', '--fail-on', 'never'], { env })).exitCode).toBe(EXIT.OK);
    const refused = await runCli(['gates', 'check', '--json'], { env: { ...env, SERVICE_API_KEY: 'gk_not_a_key_at_all_0000000000' } });
    expect(refused.exitCode).toBe(EXIT.NO_PERMISSION);
    expect(JSON.parse(refused.stderr).error).toBeDefined();
    const closed = await runCli(['gates', 'check'], { env: { SERVICE_BASE_URL: `http://127.0.0.1:${await closedPort()}`, SERVICE_API_KEY: server.apiKey } });
    expect(closed.exitCode).toBe(EXIT.UNAVAILABLE);
  });
});

describe('answers without the command line', () => {
  it('prints the version of package.json and the same root help as the command line renders', async () => {
    const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
    const home = makeHome();
    expect(await runCli(['--version'], { home })).toEqual({ stdout: `${version}\n`, stderr: '', exitCode: 0 });
    const cached = await runCli(['--help'], { home });
    // Neither loaded the command line, so neither wrote a code cache.
    expect(caches(home)).toEqual([]);
    const rendered = await runCli(['--help'], { home, env: { GOVCTL_NO_HELP_CACHE: '1' } });
    expect(cached).toEqual(rendered);
    expect(cached.stdout).toMatch(/^Usage: govctl /);
  });
});

describe('the code cache', () => {
  it("is written by a command group's first run, owner-only, and used by the next with the same answer", async () => {
    const home = makeHome();
    const first = await runCli(['gates', 'check', '--json'], { env, home });
    const files = caches(home);
    expect(files).toEqual([expect.stringMatching(new RegExp(`^cli-[0-9a-f]{24}-${process.version.replace(/\./g, '\\.')}-gates\\.v8$`))]);
    const dir = join(home, '.cache', 'govctl');
    expect(readFileSync(join(dir, files[0])).length).toBeGreaterThan(1000);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, files[0])).mode & 0o777).toBe(0o600);
    const written = statSync(join(dir, files[0])).mtimeMs;
    expect(await runCli(['gates', 'check', '--json'], { env, home })).toEqual(first);
    expect(statSync(join(dir, files[0])).mtimeMs).toBe(written); // used, not written again
    await runCli(['whoami', '--json'], { env, home });
    expect(caches(home)).toHaveLength(2);
  });

  it('of an earlier build is removed when this build writes its own', async () => {
    const home = makeHome();
    mkdirSync(join(home, '.cache', 'govctl'), { recursive: true, mode: 0o700 });
    const stale = join(home, '.cache', 'govctl', `cli-${'0'.repeat(24)}-${process.version}-gates.v8`);
    writeFileSync(stale, 'old');
    await runCli(['gates', 'check', '--json'], { env, home });
    expect(caches(home)).toEqual([expect.stringMatching(/^cli-[0-9a-f]{24}-.*-gates\.v8$/)]);
    expect(caches(home)[0]).not.toBe(stale.split('/').pop());
  });

  it("of a run against the embedded store is its own, and the service's code has a cache of its own that a run against a service never reads", async () => {
    const home = makeHome();
    await runCli(['whoami', '--json'], { env, home });
    const [remote] = caches(home);
    expect(caches(home)).toEqual([remote]); // dist/cli/service.js was not loaded
    const local = await runCli(['whoami', '--json', '--base-url', 'local'], { home });
    expect(local.exitCode).toBe(0);
    const files = caches(home);
    expect(files).toEqual([remote.replace(/\.v8$/, '-local-service.v8'), remote.replace(/\.v8$/, '-local.v8'), remote]);
    expect(await runCli(['whoami', '--json', '--base-url=local'], { home })).toEqual(local);
    expect(caches(home)).toEqual(files);
  });

  it('changes no answer when it is damaged, empty or cut short, and is replaced by a good one', async () => {
    const home = makeHome();
    const reference = await runCli(['gates', 'check', '--json'], { env, home });
    const [file] = caches(home);
    const path = join(home, '.cache', 'govctl', file);
    const good = readFileSync(path);
    for (const bad of [Buffer.alloc(good.length, 7), Buffer.alloc(0), good.subarray(0, 100)]) {
      writeFileSync(path, bad);
      expect(await runCli(['gates', 'check', '--json'], { env, home })).toEqual(reference);
      expect(readFileSync(path).length).toBeGreaterThan(1000);
    }
  });

  it('changes no answer when it cannot be written, and none is read without a home directory', async () => {
    const home = makeHome();
    mkdirSync(join(home, '.cache'));
    writeFileSync(join(home, '.cache', 'govctl'), 'a file where the directory would be');
    const reference = await runCli(['gates', 'check', '--json'], { env });
    expect(await runCli(['gates', 'check', '--json'], { env, home })).toEqual(reference);
    const homeless = await execa(process.execPath, [join(REPO, 'bin', 'govctl.js'), 'gates', 'check', '--json'], {
      env: { PATH: process.env.PATH ?? '', ...env },
      extendEnv: false,
      reject: false,
      stripFinalNewline: false,
    });
    expect({ stdout: homeless.stdout, stderr: homeless.stderr, exitCode: homeless.exitCode }).toEqual(reference);
  });
});

describe('a broken build', () => {
  it('exits 70 naming the build step when the command line cannot be loaded', async () => {
    // A copy of bin/ without dist/: the shared build is left alone for the other tests.
    const copy = makeTempDir('govctl-nobuild-');
    mkdirSync(join(copy, 'bin'));
    for (const file of ['govctl.js', 'package.json']) copyFileSync(join(REPO, 'bin', file), join(copy, 'bin', file));
    copyFileSync(join(REPO, 'package.json'), join(copy, 'package.json'));
    const run = async (): Promise<CliResult> => {
      const result = await execa(process.execPath, [join(copy, 'bin', 'govctl.js'), 'whoami'], { env: cleanEnv(makeHome()), extendEnv: false, reject: false });
      return { stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode ?? -1 };
    };
    const missing = await run();
    expect(missing.exitCode).toBe(EXIT.INTERNAL);
    expect(missing.stderr).toMatch(/cannot load the command line .*npm run build/);

    cpSync(join(REPO, 'dist'), join(copy, 'dist'), { recursive: true });
    symlinkSync(join(REPO, 'node_modules'), join(copy, 'node_modules'), 'dir');
    writeFileSync(join(copy, 'dist', 'cli', 'main.js'), 'this is not javascript {{{\n');
    chmodSync(join(copy, 'dist', 'cli', 'main.js'), 0o644);
    expect((await run()).exitCode).toBe(EXIT.INTERNAL);
  });
});
