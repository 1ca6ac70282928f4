/**
 * `govctl posture`, `govctl systems` and `govctl derive` against a real service: tab-separated
 * lines when piped, exactly the service's body with --json, and (in-process, on a pretend
 * terminal) the score bars and relative times; plus the embedded store through --data-dir.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryIO } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { callService, changeEvent, postRecord, RISK_ASSESSMENT, tempDir } from '../helpers/cli-fixtures.js';

let server: TestServer;
let env: Record<string, string>;
const temp = tempDir();

beforeAll(async () => {
  server = await startTestServer();
  env = { SERVICE_BASE_URL: server.url, SERVICE_API_KEY: server.apiKey };
  await postRecord(server, 'ai_risk_assessment', 'loan-scorer', RISK_ASSESSMENT);
  await postRecord(server, 'change_event', 'chat-bot', changeEvent('chat-bot'));
});

afterAll(async () => {
  await server?.stop();
  temp.remove();
});

/** Runs the CLI in-process on a pretend terminal (colour forced) with the given clock. */
async function onTerminal(args: string[], clock?: () => Date): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = createMemoryIO({ isTTY: true, columns: 120, env: { FORCE_COLOR: '1' } });
  const code = await main(args, {
    io,
    env: { ...env, FORCE_COLOR: '1', HOME: temp.dir, XDG_CONFIG_HOME: temp.dir, XDG_DATA_HOME: temp.dir },
    cwd: temp.dir,
    processHandlers: false,
    ...(clock ? { clock } : {}),
  });
  return { code, stdout: io.stdoutText(), stderr: io.stderrText() };
}

const plain = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '');

describe('govctl posture', () => {
  it('prints name<TAB>value lines when piped', async () => {
    const { body } = await callService(server, 'GET', 'grc/posture-brief');
    const brief = body as { overall_pct: number; frameworks: { framework: string; score_pct: number }[]; failing_gates: string[]; unattested_24h: number };
    const result = await runCli(['posture'], { env });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      [
        `overall_pct\t${brief.overall_pct}`,
        ...brief.frameworks.map((entry) => `${entry.framework}\t${entry.score_pct}`),
        `failing_gates\t${brief.failing_gates.join(',')}`,
        `unattested_24h\t${brief.unattested_24h}`,
        '',
      ].join('\n'),
    );
    expect(result.stdout).toMatch(/^nist_airf\t50$/m);
    expect(result.stdout).toMatch(/^unattested_24h\t2$/m);
  });

  it('prints exactly the service body with --json', async () => {
    const { body } = await callService(server, 'GET', 'grc/posture-brief');
    const result = await runCli(['posture', '--json'], { env });
    expect(JSON.parse(result.stdout)).toEqual(body);
  });

  it('draws a bar per framework, coloured by score, on a terminal', async () => {
    const { code, stdout } = await onTerminal(['posture']);
    expect(code).toBe(0);
    // NIST AI RMF: 2 of 4 controls, 50 %, yellow; ISO 27001: 1 of 8 (the change event), 12 %, red.
    expect(stdout).toContain('\u001b[33m█████░░░░░  50%\u001b[39m');
    expect(stdout).toContain('\u001b[31m█░░░░░░░░░  12%\u001b[39m');
    const text = plain(stdout);
    expect(text).toMatch(/NIST AI RMF \(nist_airf\)\s+│ █████░░░░░ {2}50% │ ✗ failing/);
    expect(text).toMatch(/overall\s+│ [█░]{10} +\d+% │/);
    expect(text).toMatch(/failing gates: eu_ai_act, iso_42001, soc2_type2, iso_27001, nist_airf/);
    expect(text).toMatch(/systems without an attestation in the last 24 h: 2/);
  });
});

describe('govctl systems', () => {
  it('prints one tab-separated line per system with ISO 8601 times when piped, and filters by --name', async () => {
    const result = await runCli(['systems'], { env });
    expect(result.exitCode, result.stderr).toBe(0);
    const rows = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split('\t'));
    expect(rows.map((row) => row[0]).sort()).toEqual(['chat-bot', 'loan-scorer']);
    const loan = rows.find((row) => row[0] === 'loan-scorer')!;
    expect(loan[1]).toMatch(/^sys_/);
    expect(loan.slice(2, 4)).toEqual(['true', 'limited']);
    expect(loan[4]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(rows.find((row) => row[0] === 'chat-bot')!.slice(2, 4)).toEqual(['false', '']);
    const one = await runCli(['systems', '--name', 'loan-scorer'], { env });
    expect(one.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(one.stdout.startsWith('loan-scorer\t')).toBe(true);
  });

  it('--name matches part of the name, ignoring case, as its help says', async () => {
    const part = await runCli(['systems', '--name', 'LOAN'], { env });
    expect(
      part.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split('\t')[0]),
    ).toEqual(['loan-scorer']);
    const help = await runCli(['systems', '--help'], { env });
    expect(help.stdout).toMatch(/--name <name>\s+only systems whose name contains this,\s+ignoring case/);
  });

  it('prints exactly the service body with --json', async () => {
    const { body } = await callService(server, 'GET', 'grc/systems?name=chat-bot');
    const result = await runCli(['systems', '--name', 'chat-bot', '--json'], { env });
    expect(JSON.parse(result.stdout)).toEqual(body);
    expect((body as { systems: unknown[] }).systems).toHaveLength(1);
  });

  it('shows relative times and ✓/✗ on a terminal', async () => {
    const later = () => new Date(Date.now() + 5 * 60_000);
    const { code, stdout } = await onTerminal(['systems'], later);
    expect(code).toBe(0);
    const text = plain(stdout);
    expect(text).toMatch(/loan-scorer\s+│ sys_\S+\s+│ ✓\s+│ limited\s+│ 5 minutes ago/);
    expect(text).toMatch(/chat-bot\s+│ sys_\S+\s+│ ✗/);
  });
});

describe('govctl derive', () => {
  const description = 'Scores consumer loan applications using the OpenAI API; deployed via CI';

  it('prints record_type, priority and controls tab-separated when piped, and the body with --json', async () => {
    const { body } = await callService(server, 'POST', 'grc/derive-controls', { description, risk_tier: 'limited' });
    const result = await runCli(['derive', '--description', description, '--risk-tier', 'limited'], { env });
    expect(result.exitCode, result.stderr).toBe(0);
    const recommendations = (body as { recommendations: { record_type: string; priority: string; controls: string[] }[] }).recommendations;
    expect(result.stdout).toBe(recommendations.map((r) => `${r.record_type}\t${r.priority}\t${r.controls.join(',')}\n`).join(''));
    expect(result.stdout).toMatch(/^ai_risk_assessment\trequired\t/m);
    const json = await runCli(['derive', '--description', description, '--risk-tier', 'limited', '--json'], { env });
    expect(JSON.parse(json.stdout)).toEqual(body);
  });

  it('wraps the controls in a table on a terminal', async () => {
    const { code, stdout } = await onTerminal(['derive', '--description', description, '--risk-tier', 'high']);
    expect(code).toBe(0);
    const text = plain(stdout);
    expect(text).toMatch(/RECORD TYPE\s+│ PRIORITY\s+│ CONTROLS/);
    expect(Math.max(...text.split('\n').map((line) => line.length))).toBeLessThanOrEqual(120);
  });

  it('refuses an unknown risk tier or a missing description as usage errors', async () => {
    expect((await runCli(['derive', '--description', 'x', '--risk-tier', 'severe'], { env })).exitCode).toBe(64);
    expect((await runCli(['derive', '--risk-tier', 'high'], { env })).exitCode).toBe(64);
  });
});

describe('the embedded store', () => {
  it('answers posture, systems and gates from --data-dir, and CI without a service is a configuration error', async () => {
    const dataDir = `${temp.dir}/local`;
    const posture = await runCli(['posture', '--data-dir', dataDir], {});
    expect(posture.exitCode, posture.stderr).toBe(0);
    expect(posture.stdout).toMatch(/^overall_pct\t0$/m);
    expect(posture.stderr).toMatch(/using the local store/);
    const systems = await runCli(['systems', '--data-dir', dataDir, '--json'], {});
    expect(JSON.parse(systems.stdout)).toEqual({ systems: [], total: 0 });
    expect((await runCli(['gates', 'check', '--data-dir', dataDir], {})).exitCode).toBe(2);
    const ci = await runCli(['gates', 'check', '--data-dir', dataDir, '--on-error', 'silent'], { env: { CI: 'true' } });
    expect(ci.exitCode).toBe(78);
    expect((await runCli(['gates', 'check', '--base-url', 'local', '--data-dir', dataDir], { env: { CI: 'true' } })).exitCode).toBe(2);
  });
});
