/**
 * The fast path of `govctl gates check` (src/cli/fast-path.ts, dist/cli/fast-path.cjs with its code
 * cache): which runs it takes, and that a run it takes ends exactly as the full command line ends
 * it (stdout, stderr, exit code), against a real service on 127.0.0.1 with a real SQLite file.
 */
import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFastGatesCheck, runFastPath } from '../../src/cli/fast-path.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { createMemoryIO } from '../../src/cli/io.js';
import { BIN, REPO, ensureBuilt, makeHome, runProcess as runCli, type CliResult } from '../helpers/cli.js';
import { startFaultServer, type FaultServer } from '../helpers/fault-server.js';
import { provisionWorkspace, startTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/cli-fixtures.js';
import { closedPort } from '../helpers/ports.js';

beforeAll(ensureBuilt);

let server: TestServer;
let env: Record<string, string>;
const temp = tempDir('govctl-fast-');

beforeAll(async () => {
  server = await startTestServer();
  env = { SERVICE_BASE_URL: server.url, SERVICE_API_KEY: server.apiKey };
});

afterAll(async () => {
  await server?.stop();
  temp.remove();
});

describe('which runs take the fast path', () => {
  const taken = (failOn: string, format: string, more: Partial<{ json: boolean; noColor: boolean; verbose: boolean; flags: object }> = {}) => ({
    failOn,
    format,
    json: false,
    noColor: false,
    verbose: false,
    flags: {},
    ...more,
  });

  it('takes gates check with its own flags, the output flags and the settings flags, each once', () => {
    expect(parseFastGatesCheck(['gates', 'check'])).toEqual(taken('soft', 'table'));
    expect(parseFastGatesCheck(['gates', 'check', '--json'])).toEqual(taken('soft', 'json', { json: true }));
    expect(parseFastGatesCheck(['gates', 'check', '--json', '--format', 'json'])).toEqual(taken('soft', 'json', { json: true }));
    expect(parseFastGatesCheck(['gates', 'check', '--format', 'junit', '--fail-on', 'hard'])).toEqual(taken('hard', 'junit'));
    expect(parseFastGatesCheck(['gates', 'check', '--format=github', '--no-color', '-v'])).toEqual(taken('soft', 'github', { noColor: true, verbose: true }));
    expect(parseFastGatesCheck(['gates', 'check', '--json', '--fail-on=never', '--base-url=http://x', '--workspace', 'ws_1', '--api-key-file', 'k'])).toEqual(
      taken('never', 'json', { json: true, flags: { baseUrl: 'http://x', workspace: 'ws_1', apiKeyFile: 'k' } }),
    );
  });

  it('leaves everything else to the full command line', () => {
    const declined = [
      ['gates', 'check', '--format', 'yaml'],
      ['gates', 'check', '--json', '--format', 'github'], // a usage error, the full command line's to report
      ['gates', 'check', '--json', '--help'],
      ['gates', 'check', '-h'],
      ['gates', 'check', '--json', '--fail-on', 'sometimes'],
      ['gates', 'check', '--json', '--fail-on'],
      ['gates', 'check', '--json', '--json'],
      ['gates', 'check', '-v', '--verbose'],
      ['gates', 'check', '--json=yes'],
      ['gates', 'check', '--json', '--api-key-file', '-'],
      ['gates', 'check', '--json', '--base-url', ''],
      ['gates', 'check', '--json', '--system', 'x'],
      ['gates', 'check', '--json', 'extra'],
      ['--json', 'gates', 'check'],
      ['gates', '--json'],
      ['posture', '--json'],
    ];
    for (const argv of declined) expect(parseFastGatesCheck(argv), argv.join(' ')).toBeNull();
  });

  it('runs in-process against the service, and declines the embedded store, a bad setting and GOVCTL_NO_FAST_PATH', async () => {
    const home = makeHome();
    const io = createMemoryIO();
    const code = await runFastPath(['gates', 'check', '--json'], { env: { ...env, HOME: home }, cwd: home, io });
    expect(code).toBe(2);
    expect(JSON.parse(io.stdoutText()).gates).toHaveLength(5);
    expect(JSON.parse(io.stderrText())).toMatchObject({ error: 'gates_failed' });

    const declined = async (runEnv: Record<string, string>) => {
      const quiet = createMemoryIO();
      const result = await runFastPath(['gates', 'check', '--json'], { env: { HOME: home, ...runEnv }, cwd: home, io: quiet });
      expect(quiet.stdoutText() + quiet.stderrText()).toBe('');
      return result;
    };
    expect(await declined({})).toBeNull(); // nothing configured: the embedded store
    expect(await declined({ SERVICE_API_KEY: server.apiKey })).toBeNull(); // a key without a URL: 78, the full path's to say
    expect(await declined({ ...env, SERVICE_ON_ERROR: 'loud' })).toBeNull(); // a malformed setting
    expect(await declined({ ...env, GOVCTL_NO_FAST_PATH: '1' })).toBeNull();
  });
});

/** The same command through the fast path and through the full command line. */
async function both(args: readonly string[], options: { env?: Record<string, string>; cwd?: string; home?: string } = {}): Promise<[CliResult, CliResult]> {
  const home = options.home ?? makeHome();
  const runEnv = options.env ?? env;
  const fast = await runCli(['gates', 'check', ...args], { env: runEnv, cwd: options.cwd, home });
  const full = await runCli(['gates', 'check', ...args], { env: { ...runEnv, GOVCTL_NO_FAST_PATH: '1' }, cwd: options.cwd, home });
  return [fast, full];
}

describe('a run on the fast path ends as the full command line ends it', () => {
  it('on gates that fail, with each --fail-on and each format', async () => {
    for (const args of [['--json'], ['--json', '--fail-on', 'hard'], ['--json', '--fail-on=never'], ['--format', 'json'], ['--format=json', '--fail-on', 'never'], [], ['--fail-on', 'never'], ['--no-color'], ['--format', 'github']]) {
      const [fast, full] = await both(args);
      expect(fast, args.join(' ')).toEqual(full);
    }
    const [fast] = await both(['--json']);
    expect(fast.exitCode).toBe(2);
    expect(JSON.parse(fast.stdout).gates.map((gate: { gate_id: string }) => gate.gate_id)).toContain('gate_eu_ai_act');

    // Coloured piped lines (FORCE_COLOR) and --no-color over it.
    for (const args of [[], ['--no-color']]) {
      const [colourFast, colourFull] = await both(args, { env: { ...env, FORCE_COLOR: '1' } });
      expect(colourFast).toEqual(colourFull);
    }

    // JUnit carries the time of the run: equal once the times are taken out.
    const untimed = (result: CliResult) => ({ ...result, stdout: result.stdout.replace(/(timestamp|time)="[^"]*"/g, '$1=""') });
    const [junitFast, junitFull] = await both(['--format', 'junit']);
    expect(untimed(junitFast)).toEqual(untimed(junitFull));
    expect(junitFast.stdout).toMatch(/^<\?xml/);

    // -v traces each request with its duration.
    const unclocked = (result: CliResult) => ({ ...result, stderr: result.stderr.replace(/ in \d+ ms/g, ' in N ms') });
    const [verboseFast, verboseFull] = await both(['--json', '-v']);
    expect(unclocked(verboseFast)).toEqual(unclocked(verboseFull));
    expect(verboseFast.stderr).toMatch(/GET .*\/api\/me authorization: Bearer \*\*\* → 200/);
    expect(verboseFast.stderr).not.toContain(server.apiKey);

    // The GitHub job summary is appended the same way.
    const summaries = [join(temp.dir, 'summary-fast.md'), join(temp.dir, 'summary-full.md')];
    const fastGithub = await runCli(['gates', 'check', '--format', 'github'], { env: { ...env, GITHUB_STEP_SUMMARY: summaries[0]! } });
    const fullGithub = await runCli(['gates', 'check', '--format', 'github'], { env: { ...env, GITHUB_STEP_SUMMARY: summaries[1]!, GOVCTL_NO_FAST_PATH: '1' } });
    expect(fastGithub).toEqual(fullGithub);
    expect(readFileSync(summaries[0]!, 'utf8')).toBe(readFileSync(summaries[1]!, 'utf8'));
    expect(readFileSync(summaries[0]!, 'utf8')).toMatch(/gate_eu_ai_act/);
  });

  it('on a refused key (77), another workspace (a 404), a closed port (69) and a reply that is not a gate list (69)', async () => {
    const other = provisionWorkspace(server.dbPath);
    const cases: Record<string, string>[] = [
      { SERVICE_BASE_URL: server.url, SERVICE_API_KEY: 'gk_not_a_key_at_all_0000000000' },
      { ...env, SERVICE_WORKSPACE_ID: other.workspaceId },
      { SERVICE_BASE_URL: `http://127.0.0.1:${await closedPort()}`, SERVICE_API_KEY: server.apiKey },
    ];
    const fault: FaultServer = await startFaultServer({ handler: () => ({ body: { gates: 'nope', user_id: 'usr_1', workspace_id: 'ws_1' } }) });
    try {
      cases.push({ SERVICE_BASE_URL: fault.url, SERVICE_API_KEY: 'gk_whatever_key_0000000000000' });
      const codes: number[] = [];
      for (const runEnv of cases) {
        const [fast, full] = await both(['--json'], { env: runEnv });
        expect(fast, JSON.stringify(runEnv)).toEqual(full);
        codes.push(fast.exitCode);
      }
      // A workspace the key does not reach is a configuration error (docs/decisions.md).
      expect(codes).toEqual([EXIT.NO_PERMISSION, EXIT.CONFIG, EXIT.UNAVAILABLE, EXIT.UNAVAILABLE]);
    } finally {
      await fault.close();
    }
  });

  it('with the settings in flags, a key file, a project package.json and a .govctlrc.json', async () => {
    const keyFile = join(temp.dir, 'api-key');
    writeFileSync(keyFile, `${server.apiKey}\n`);
    chmodSync(keyFile, 0o600);
    const [fast, full] = await both(['--json', '--base-url', server.url, '--api-key-file', keyFile, '--workspace', server.workspaceId], { env: {} });
    expect(fast).toEqual(full);
    expect(fast.exitCode).toBe(2);

    // A key file others can read: the same warning on both paths.
    const shared = join(temp.dir, 'shared-key');
    writeFileSync(shared, server.apiKey);
    chmodSync(shared, 0o644);
    const [warnedFast, warnedFull] = await both(['--json', '--base-url', server.url, '--api-key-file', shared], { env: {} });
    expect(warnedFast).toEqual(warnedFull);
    expect(warnedFast.stderr).toMatch(/readable by other users/);

    const project = join(temp.dir, 'project');
    mkdirSync(join(project, 'sub'), { recursive: true });
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'p', govctl: { baseUrl: server.url, apiKey: server.apiKey } }));
    chmodSync(join(project, 'package.json'), 0o600);
    const [pkgFast, pkgFull] = await both(['--json'], { env: {}, cwd: join(project, 'sub') });
    expect(pkgFast).toEqual(pkgFull);
    expect(pkgFast.exitCode).toBe(2);

    const rc = join(temp.dir, 'rc');
    mkdirSync(rc);
    writeFileSync(join(rc, '.govctlrc.json'), JSON.stringify({ baseUrl: server.url, apiKeyFile: keyFile, colour: 'no' }));
    const [rcFast, rcFull] = await both(['--json'], { env: {}, cwd: rc });
    expect(rcFast).toEqual(rcFull);
    expect(rcFast.stderr).toMatch(/unknown setting "colour"/);

    // Malformed JSON: the fast path declines and the full command line reports it (78).
    const bad = join(temp.dir, 'bad');
    mkdirSync(bad);
    writeFileSync(join(bad, 'package.json'), '{"govctl": {');
    const [badFast, badFull] = await both(['--json'], { env, cwd: bad });
    expect(badFast).toEqual(badFull);
    expect(badFast.exitCode).toBe(78);
  });

  it('with the code cache missing, stale or damaged (it compiles as usual), and with the fast path broken (the full command line answers)', async () => {
    // A copy of the build: the shared dist/ is left alone for the other tests.
    const copy = join(temp.dir, 'copy');
    mkdirSync(join(copy, 'bin'), { recursive: true });
    for (const file of ['govctl.js', 'package.json']) copyFileSync(join(REPO, 'bin', file), join(copy, 'bin', file));
    cpSync(join(REPO, 'dist'), join(copy, 'dist'), { recursive: true });
    copyFileSync(join(REPO, 'package.json'), join(copy, 'package.json'));
    symlinkSync(join(REPO, 'node_modules'), join(copy, 'node_modules'), 'dir');
    const cache = readFileSync(join(copy, 'dist', 'cli', 'fast-path.cache'));
    expect(cache.subarray(0, 40).toString('latin1')).toMatch(/^[0-9a-f]{24}\n/);
    const [reference] = await both(['--json']);

    const runCopy = () => runCliWithBin(join(copy, 'bin', 'govctl.js'));
    expect(await runCopy()).toEqual(reference);
    writeFileSync(join(copy, 'dist', 'cli', 'fast-path.cache'), Buffer.concat([Buffer.from('0'.repeat(24) + '\n'), cache.subarray(25)])); // another build's
    expect(await runCopy()).toEqual(reference);
    writeFileSync(join(copy, 'dist', 'cli', 'fast-path.cache'), Buffer.concat([cache.subarray(0, 25), Buffer.alloc(cache.length - 25, 7)])); // damaged
    expect(await runCopy()).toEqual(reference);
    writeFileSync(join(copy, 'dist', 'cli', 'fast-path.cache'), '');
    expect(await runCopy()).toEqual(reference);

    // A fast path that cannot load (here, not JavaScript) must never end the run with a bare exit 1.
    writeFileSync(join(copy, 'dist', 'cli', 'fast-path.cjs'), 'this is not javascript {{{\n// govctl-build 0\n');
    expect(await runCopy()).toEqual(reference);
  });
});

async function runCliWithBin(bin: string): Promise<CliResult> {
  const { execa } = await import('execa');
  const home = makeHome();
  const result = await execa(process.execPath, [bin, 'gates', 'check', '--json'], {
    cwd: home,
    env: { PATH: process.env.PATH ?? '', HOME: home, ...env },
    extendEnv: false,
    reject: false,
    stripFinalNewline: false,
    stdin: 'ignore',
  });
  expect(bin).not.toBe(BIN);
  return { stdout: String(result.stdout), stderr: String(result.stderr), exitCode: result.exitCode ?? -1 };
}
