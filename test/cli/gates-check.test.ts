/**
 * `govctl gates check` end to end (in-process, test/helpers/cli.ts) against a real service on
 * 127.0.0.1 with a real SQLite file. The exit codes 2, 1 and 0 are reached by real data: the gate policy is set with
 * `govctl admin gates set` on the service's database, then evidence is added until the gates pass.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startFaultServer } from '../helpers/fault-server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { callService, changeEvent, findAll, parseXml, postRecord, RISK_ASSESSMENT, tempDir } from '../helpers/cli-fixtures.js';
import { closedPort } from '../helpers/ports.js';

let server: TestServer;
let env: Record<string, string>;
const temp = tempDir();

beforeAll(async () => {
  server = await startTestServer();
  env = { SERVICE_BASE_URL: server.url, SERVICE_API_KEY: server.apiKey };
});

afterAll(async () => {
  await server?.stop();
  temp.remove();
});

const gatesCheck = (...args: string[]) => runCli(['gates', 'check', ...args], { env });

describe('govctl gates check against a real service', () => {
  it('exits 2 while a blocking gate fails, whatever --fail-on short of never says', async () => {
    // The default policy: eu_ai_act required at 80 %; nothing recorded yet.
    const result = await gatesCheck();
    expect(result.exitCode).toBe(2);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0].split('\t').slice(0, 3)).toEqual(['gate_eu_ai_act', 'hard', '2']);
    expect(result.stderr).toMatch(/1 blocking gate failing \(gate_eu_ai_act\).*exit 2/);
    expect((await gatesCheck('--fail-on', 'hard')).exitCode).toBe(2);
    const never = await gatesCheck('--fail-on', 'never');
    expect(never.exitCode).toBe(0);
    expect(never.stderr).toMatch(/not failing the run \(--fail-on never\)/);
  });

  it('reaches 1 and then 0 as the policy is set with `admin gates set` and evidence is added', async () => {
    const admin = (framework: string, mode: string, threshold: string) =>
      runCli(
        ['admin', 'gates', 'set', framework, '--mode', mode, '--threshold', threshold, '--db', server.dbPath, '--workspace', server.workspaceId, '--json'],
        {},
      );
    const set = await admin('eu_ai_act', 'required', '20');
    expect(set.exitCode, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout).gates[0]).toEqual({ framework: 'eu_ai_act', mode: 'required', threshold: 20, source: 'workspace' });
    for (const framework of ['iso_42001', 'soc2_type2', 'iso_27001', 'nist_airf']) expect((await admin(framework, 'advisory', '10')).exitCode).toBe(0);

    // Still nothing recorded: the blocking EU gate fails.
    expect((await gatesCheck()).exitCode).toBe(2);

    // A risk assessment covers 2 of 10 EU controls (20 %): the blocking gate passes; ISO 27001 (0 %) still fails, softly.
    await postRecord(server, 'ai_risk_assessment', 'loan-scorer', RISK_ASSESSMENT);
    const soft = await gatesCheck();
    expect(soft.exitCode).toBe(1);
    expect(soft.stdout).toMatch(/^gate_iso_27001\tsoft\t1\t/m);
    expect(soft.stdout).toMatch(/^gate_eu_ai_act\tpass\t0\t/m);
    expect((await gatesCheck('--fail-on', 'hard')).exitCode).toBe(0);
    expect((await gatesCheck('--fail-on', 'never')).exitCode).toBe(0);

    // A change event covers ISO 27001 8.32 (1 of 8, 12 %): every gate passes.
    await postRecord(server, 'change_event', 'loan-scorer', changeEvent('loan-scorer'));
    const passed = await gatesCheck();
    expect(passed.exitCode, passed.stderr).toBe(0);
    expect(
      passed.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split('\t')[1]),
    ).toEqual(['pass', 'pass', 'pass', 'pass', 'pass']);
    expect(passed.stderr).toBe('');
  });

  it('prints exactly the service body with --json (and --format json)', async () => {
    const direct = await callService(server, 'GET', 'grc/gates/check');
    const json = await gatesCheck('--json');
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(direct.body);
    const format = await gatesCheck('--format', 'json');
    expect(JSON.parse(format.stdout)).toEqual(direct.body);
    const conflict = await gatesCheck('--json', '--format', 'junit');
    expect(conflict.exitCode).toBe(64);
    expect(conflict.stdout).toBe('');
  });

  it('rejects an unknown --fail-on or --format as a usage error', async () => {
    expect((await gatesCheck('--fail-on', 'sometimes')).exitCode).toBe(64);
    expect((await gatesCheck('--format', 'xml')).exitCode).toBe(64);
  });
});

describe('gates check output formats', () => {
  it('writes well-formed JUnit XML: one suite, one testcase per gate, a typed failure on each failing one', async () => {
    // Raise the blocking gate above the score again: one hard failure, the rest passing.
    const set = await runCli(['admin', 'gates', 'set', 'eu_ai_act', '--threshold', '90', '--db', server.dbPath, '--workspace', server.workspaceId], {});
    expect(set.exitCode, set.stderr).toBe(0);
    const result = await gatesCheck('--format', 'junit');
    expect(result.exitCode).toBe(2);
    const root = parseXml(result.stdout);
    const suites = findAll(root, 'testsuite');
    expect(suites.map((suite) => suite.attributes.name)).toEqual(['govctl gates']);
    const cases = findAll(root, 'testcase');
    expect(cases).toHaveLength(5);
    const failures = findAll(root, 'failure');
    expect(failures).toHaveLength(1);
    expect(failures[0].attributes.type).toBe('hard');
    expect(failures[0].attributes.message).toMatch(/^20% < 90%: record /);
    expect(suites[0].attributes).toMatchObject({ tests: '5', failures: '1' });
  });

  it('writes GitHub annotations, errors before warnings, and appends the job summary', async () => {
    const set = await runCli(['admin', 'gates', 'set', 'iso_27001', '--threshold', '50', '--db', server.dbPath, '--workspace', server.workspaceId], {});
    expect(set.exitCode, set.stderr).toBe(0);
    const summary = join(temp.dir, 'summary.md');
    writeFileSync(summary, '# earlier step\n');
    const result = await runCli(['gates', 'check', '--format', 'github'], { env: { ...env, GITHUB_STEP_SUMMARY: summary } });
    expect(result.exitCode).toBe(2);
    const kinds = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => /^::(error|warning|notice) /.exec(line)?.[1]);
    expect(kinds).toEqual(['error', 'warning', 'notice', 'notice', 'notice']);
    expect(result.stdout).toMatch(/^::error title=EU AI Act readiness ≥ 90%25 \(gate_eu_ai_act\)::blocking gate failing: 20%25 < 90%25/m);
    expect(result.stdout).toMatch(/^::warning title=ISO\/IEC 27001 readiness ≥ 50%25 \(gate_iso_27001\)::/m);
    const text = readFileSync(summary, 'utf8');
    expect(text.startsWith('# earlier step\n### govctl gates check\n')).toBe(true);
    expect(text).toContain('| EU AI Act readiness ≥ 90% | `gate_eu_ai_act` | ❌ hard fail |');
    expect(text).toContain('exit code 2');
  });
});

describe('gate checks fail closed', () => {
  it('exits 69 when nothing listens, even with --on-error silent or SERVICE_ON_ERROR=silent', async () => {
    const port = await closedPort();
    const unreachable = { SERVICE_BASE_URL: `http://127.0.0.1:${port}`, SERVICE_API_KEY: server.apiKey, SERVICE_WORKSPACE_ID: server.workspaceId };
    for (const [args, extra] of [
      [[], {}],
      [['--on-error', 'silent'], {}],
      [['--on-error', 'warn', '--fail-on', 'never'], {}],
      [[], { SERVICE_ON_ERROR: 'silent' }],
    ] as const) {
      const result = await runCli(['gates', 'check', ...args], { env: { ...unreachable, ...extra } });
      expect(result.exitCode).toBe(69);
      expect(result.stdout).toBe('');
    }
  });

  it('exits 69 on a reply that is not a gate list, and 77 on a refused key', async () => {
    const fault = await startFaultServer();
    try {
      const faultEnv = { SERVICE_BASE_URL: fault.url, SERVICE_API_KEY: 'gk_test', SERVICE_WORKSPACE_ID: 'ws_test' };
      fault.enqueue(
        { body: { gates: [] } },
        { body: { gates: [{ gate_id: 'g', name: 'g', passing: true, blocking: true, exit_code: 2 }] } },
        { raw: 'all gates green' },
        { status: 503, body: { error: 'server_error', message: 'down' } },
        { status: 401, body: { error: 'unauthorized', message: 'the API key is not valid' } },
      );
      const codes: number[] = [];
      for (let i = 0; i < 5; i++) codes.push((await runCli(['gates', 'check', '--fail-on', 'never'], { env: faultEnv })).exitCode ?? -1);
      expect(codes).toEqual([69, 69, 69, 69, 77]);
    } finally {
      await fault.close();
    }
  });
});
