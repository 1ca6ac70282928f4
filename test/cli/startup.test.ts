/**
 * What only a process shows about start-up (bin/govctl.js): `gates check` ends with the exit code a
 * CI step reads, `--version` and `--help` answer,
 * and Node's compile cache (in $HOME/.cache/govctl, where Node has one) never changes an answer when
 * it is missing, damaged or cannot be written.
 */
import { chmodSync, copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
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

/**
 * The files a run loaded (`require.cache`), recorded at its exit by a `--require`d probe.
 */
async function loadedBy(args: readonly string[], extraEnv: Record<string, string> = {}): Promise<{ exitCode: number; files: string[] }> {
  const dir = makeTempDir('govctl-loaded-');
  const probe = join(dir, 'probe.cjs');
  const out = join(dir, 'loaded.json');
  writeFileSync(
    probe,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({ files: Object.keys(require.cache) })));\n`,
  );
  const result = await runCli(args, { env: { ...extraEnv, NODE_OPTIONS: `--require ${probe}` } });
  const loaded = JSON.parse(readFileSync(out, 'utf8')) as { files: string[] };
  return { exitCode: result.exitCode, ...loaded };
}

describe('what a run loads', () => {
  it('the service and SQLite only for a command that runs the embedded store', async () => {
    const packageOf = (files: string[]): string[] =>
      files.filter((file) => /[\\/](dist[\\/]cli[\\/]service\.js|node_modules[\\/]better-sqlite3[\\/])/.test(file));
    const remote = await loadedBy(['posture', '--json', '--base-url', server.url], { SERVICE_API_KEY: server.apiKey });
    expect(remote.exitCode).toBe(0);
    expect(packageOf(remote.files)).toEqual([]);
    const local = await loadedBy(['posture', '--json', '--base-url', 'local']);
    expect(local.exitCode).toBe(0);
    expect(local.files.some((file) => file.endsWith(join('dist', 'cli', 'service.js')))).toBe(true);
    expect(local.files.some((file) => file.endsWith('better_sqlite3.node'))).toBe(true);
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

describe('version and help', () => {
  it('prints the version of package.json, and the root help', async () => {
    const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
    expect(await runCli(['--version'])).toEqual({ stdout: `${version}\n`, stderr: '', exitCode: 0 });
    const help = await runCli(['--help']);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toMatch(/^Usage: govctl /);
  });
});

/** Whether this Node has a compile cache of its own (module.enableCompileCache, Node 22.1 and later). */
const nodeHasCompileCache = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function';

/** Every file below a directory, relative to it. */
function filesBelow(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name));
  } catch {
    return [];
  }
}

describe("Node's compile cache", () => {
  it('is kept in ~/.cache/govctl, owner-only, where Node has one, and a run that reads it gives the same answer', async () => {
    const home = makeHome();
    const dir = join(home, '.cache', 'govctl');
    const first = await runCli(['gates', 'check', '--json'], { env, home });
    if (!nodeHasCompileCache) {
      expect(filesBelow(dir)).toEqual([]);
      return;
    }
    const files = filesBelow(dir);
    expect(files.length).toBeGreaterThan(0);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(await runCli(['gates', 'check', '--json'], { env, home })).toEqual(first);
  });

  it('changes no answer when it is damaged, empty or cut short', async () => {
    const home = makeHome();
    const reference = await runCli(['gates', 'check', '--json'], { env, home });
    const files = filesBelow(join(home, '.cache', 'govctl'));
    expect(files.length > 0).toBe(nodeHasCompileCache);
    for (const damage of [(bytes: Buffer) => Buffer.alloc(bytes.length, 7), () => Buffer.alloc(0), (bytes: Buffer) => bytes.subarray(0, 100)]) {
      for (const file of files) writeFileSync(file, damage(readFileSync(file)));
      expect(await runCli(['gates', 'check', '--json'], { env, home })).toEqual(reference);
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
    copyFileSync(join(REPO, 'bin', 'govctl.js'), join(copy, 'bin', 'govctl.js'));
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
