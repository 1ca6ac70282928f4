/**
 * The terminal output shape end to end, on a real pseudo-terminal (util-linux `script`, see
 * test/helpers/pty.ts), against the piped shape of the same commands (docs/cli.md "Output"):
 * tables, bars, colour and relative times on a terminal; tab-separated lines, ISO 8601 and no
 * colour piped; the colour order (`--no-color` > `NO_COLOR` > `FORCE_COLOR` > `TERM=dumb` > TTY);
 * progress on stderr; `--json` as the service's body; the API key kept out of what is shown.
 *
 * One real service for the file (startTestServer: 127.0.0.1, a real SQLite file), with evidence
 * seeded through the service first. Tests run in order and each that writes uses its own system.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, makeHome, makeTempDir, runCli } from '../helpers/cli.js';
import { ANSI_SGR, HAS_SCRIPT, PTY_SKIP_REASON, runInPty, stripAnsi } from '../helpers/pty.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const SYSTEM = 'tty-loan-scorer';
const BAR = /[█░]{10} +\d+%/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const TABLE_BORDER = /[│┌└─]/;
const ANY_ESCAPE = /\x1b/;

let server: TestServer;
let env: Record<string, string>;

/** A workspace endpoint called directly, not through the command line. */
async function service(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.url}/api/workspaces/${server.workspaceId}/governance/${path}`, {
    method,
    headers: { authorization: `Bearer ${server.apiKey}`, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

async function seed(record: Record<string, unknown>): Promise<void> {
  const { status, body } = await service('POST', 'grc/evidence', record);
  if (status >= 300) throw new Error(`seeding failed: ${status} ${JSON.stringify(body)}`);
}

const changeRecord = (system: string, n: number, occurredAt?: string) => ({
  record_type: 'change_event',
  system_name: system,
  ...(occurredAt !== undefined ? { occurred_at: occurredAt } : {}),
  payload: { type: 'deployment', by: 'ci@example.com', description: `release ${n}`, environment: 'production', system },
});

beforeAll(async () => {
  await ensureBuilt();
  server = await startTestServer({ rateLimitPerMinute: 1_000_000 });
  env = { SERVICE_BASE_URL: server.url, SERVICE_API_KEY: server.apiKey };
  const now = new Date().toISOString();
  await seed({
    record_type: 'ai_risk_assessment',
    system_name: SYSTEM,
    occurred_at: now,
    assessor: 'alice@example.com',
    payload: {
      risk_level: 'limited',
      risk_summary: 'Scores consumer loan applications',
      intended_purpose: 'Assist underwriters',
      impact_domains: ['credit'],
      art5_self_assessment: true,
    },
  });
  await seed(changeRecord(SYSTEM, 1, now));
  // Two hours old: shown as `2 hours ago` on a terminal.
  await seed(changeRecord(SYSTEM, 2, new Date(Date.now() - 2 * 3600_000).toISOString()));
});

afterAll(async () => {
  await server?.stop();
});

/** The lines of a terminal's output that carry a framework's bar. */
function barLines(output: string): string[] {
  return stripAnsi(output)
    .split('\n')
    .filter((line) => BAR.test(line));
}

describe.skipIf(!HAS_SCRIPT)(HAS_SCRIPT ? 'on a real terminal' : `on a real terminal (skipped: ${PTY_SKIP_REASON})`, () => {
  describe('posture', () => {
    it('draws a table with a coloured bar and a percentage per framework on a terminal', async () => {
      const brief = (await service('GET', 'grc/posture-brief')).body as { frameworks: { framework: string; score_pct: number }[]; overall_pct: number };
      const result = await runInPty(['posture'], { env });
      expect(result.exitCode).toBe(0);
      expect(result.output).toMatch(ANSI_SGR);
      const plain = stripAnsi(result.output);
      expect(plain).toMatch(TABLE_BORDER);
      expect(plain).toMatch(/FRAMEWORK.*SCORE.*GATE/);
      expect(brief.frameworks.length).toBeGreaterThan(0);
      for (const { framework, score_pct } of brief.frameworks) {
        const line = plain.split('\n').find((text) => text.includes(`(${framework})`));
        expect(line, framework).toBeDefined();
        expect(line).toMatch(new RegExp(`[█░]{10} +${score_pct}%`));
      }
      // one bar per framework, and one for the overall score
      expect(barLines(result.output)).toHaveLength(brief.frameworks.length + 1);
      expect(plain).toMatch(new RegExp(`overall.*[█░]{10} +${brief.overall_pct}%`));
    });

    it('prints name<TAB>value lines piped: no table, no bars, no escapes', async () => {
      const result = await runCli(['posture'], { env });
      expect(result.exitCode).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).not.toMatch(ANY_ESCAPE);
      expect(result.stdout).not.toMatch(/[█░│─]/);
      const lines = result.stdout.trimEnd().split('\n');
      for (const line of lines) expect(line).toMatch(/^[a-z0-9_]+\t[^\t]*$/);
      expect(lines[0]).toMatch(/^overall_pct\t\d+(\.\d+)?$/);
      expect(lines.map((line) => line.split('\t')[0])).toEqual(expect.arrayContaining(['eu_ai_act', 'failing_gates', 'unattested_24h']));
    });
  });

  describe('colour: --no-color > NO_COLOR > FORCE_COLOR > TERM=dumb > TTY', () => {
    it.each([
      ['NO_COLOR=1', [], { NO_COLOR: '1' }],
      ['--no-color', ['--no-color'], {}],
      ['TERM=dumb', [], { TERM: 'dumb' }],
      ['--no-color over FORCE_COLOR=1', ['--no-color'], { FORCE_COLOR: '1' }],
      ['NO_COLOR over FORCE_COLOR=1', [], { NO_COLOR: '1', FORCE_COLOR: '1' }],
      ['FORCE_COLOR=0', [], { FORCE_COLOR: '0' }],
    ] as const)('%s on a terminal: the same table and bars, without colour', async (_name, flags, extra) => {
      const result = await runInPty(['posture', ...flags], { env: { ...env, ...extra } });
      expect(result.exitCode).toBe(0);
      expect(result.output).not.toMatch(ANY_ESCAPE);
      expect(result.output).toMatch(TABLE_BORDER);
      expect(barLines(result.output).length).toBeGreaterThan(1);
    });

    it('FORCE_COLOR=1 outranks TERM=dumb on a terminal', async () => {
      const result = await runInPty(['posture'], { env: { ...env, TERM: 'dumb', FORCE_COLOR: '1' } });
      expect(result.exitCode).toBe(0);
      expect(result.output).toMatch(ANSI_SGR);
      expect(barLines(result.output).length).toBeGreaterThan(1);
    });

    it('FORCE_COLOR=1 piped keeps the piped shape: tab-separated lines, no table', async () => {
      const result = await runCli(['posture'], { env: { ...env, FORCE_COLOR: '1' } });
      expect(result.exitCode).toBe(0);
      for (const line of stripAnsi(result.stdout).trimEnd().split('\n')) expect(line).toMatch(/^[a-z0-9_]+\t[^\t]*$/);
      expect(result.stdout).not.toMatch(/[█░│─]/);
    });

    // docs/cli.md ranks FORCE_COLOR above the TTY check, per stream: a CI log that asks for
    // colour gets it on the piped result lines (the shape stays tab-separated).
    it('FORCE_COLOR=1 colours piped output (the ok/error result lines of import)', async () => {
      const input = [changeRecord('tty-force-color', 0), changeRecord('tty-force-color', 1)].map((record) => JSON.stringify(record)).join('\n');
      const result = await runCli(['evidence', 'import', '-'], { env: { ...env, FORCE_COLOR: '1' }, input });
      expect(result.exitCode).toBe(0);
      expect(stripAnsi(result.stdout)).toMatch(/^ok\t0\trec_/);
      expect(result.stdout).toMatch(ANSI_SGR);
    });
  });

  describe('evidence list', () => {
    it('shows relative times on a terminal and ISO 8601 piped', async () => {
      const tty = await runInPty(['evidence', 'list', '--system', SYSTEM], { env });
      expect(tty.exitCode).toBe(0);
      const plain = stripAnsi(tty.output);
      expect(plain).toMatch(TABLE_BORDER);
      expect(plain).toMatch(/RECORD ID.*TYPE.*SYSTEM.*OCCURRED/);
      expect(plain).toContain('just now');
      expect(plain).toContain('2 hours ago');
      expect(plain).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
      expect(tty.output).toMatch(ANSI_SGR);

      const piped = await runCli(['evidence', 'list', '--system', SYSTEM], { env });
      expect(piped.exitCode).toBe(0);
      expect(piped.stderr).toBe('');
      expect(piped.stdout).not.toMatch(ANY_ESCAPE);
      expect(piped.stdout).not.toMatch(/ago|just now/);
      const rows = piped.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split('\t'));
      expect(rows).toHaveLength(3);
      for (const row of rows) {
        expect(row).toHaveLength(7);
        expect(row[2]).toBe(SYSTEM);
        expect(row[3]).toMatch(ISO);
      }
    });
  });

  describe('systems and gates check', () => {
    it('systems: a table on a terminal, tab-separated lines piped', async () => {
      const tty = await runInPty(['systems', '--name', SYSTEM], { env });
      expect(tty.exitCode).toBe(0);
      const plain = stripAnsi(tty.output);
      expect(plain).toMatch(TABLE_BORDER);
      expect(plain).toMatch(/SYSTEM.*ID.*REGISTERED.*RISK TIER.*LAST EVIDENCE/);
      expect(plain).toMatch(new RegExp(`│ ${SYSTEM} +│ sys_\\S+ +│ ✓ +│ limited +│ just now +│`));

      const piped = await runCli(['systems', '--name', SYSTEM], { env });
      expect(piped.exitCode).toBe(0);
      expect(piped.stdout).toMatch(new RegExp(`^${SYSTEM}\\tsys_\\S+\\ttrue\\tlimited\\t\\d{4}-\\d\\d-\\d\\dT\\S+Z\\n$`));
    });

    it('gates check: one coloured line per gate on a terminal, tab-separated piped, the same exit code', async () => {
      const body = (await service('GET', 'grc/gates/check')).body as { gates: { gate_id: string; exit_code: number }[] };
      const verdict = Math.max(...body.gates.map((gate) => gate.exit_code));
      expect(verdict).toBeGreaterThan(0); // the seeded workspace fails its gates (the ordering test below relies on it)

      const tty = await runInPty(['gates', 'check'], { env });
      const piped = await runCli(['gates', 'check'], { env });
      expect(tty.exitCode).toBe(verdict);
      expect(piped.exitCode).toBe(verdict);

      expect(tty.output).toMatch(ANSI_SGR);
      const plain = stripAnsi(tty.output);
      for (const { gate_id, exit_code } of body.gates)
        expect(plain).toMatch(new RegExp(`(✓ pass|! soft fail|✗ HARD FAIL) .*\\(${gate_id}, exit ${exit_code}\\)`));
      expect(plain).not.toMatch(/\t/);

      const rows = piped.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split('\t'));
      expect(rows.map((row) => row[0])).toEqual(body.gates.map((gate) => gate.gate_id));
      expect(piped.stdout).not.toMatch(ANY_ESCAPE);
      if (verdict !== 0) {
        // the verdict line is the same one line in both
        const line = piped.stderr.trimEnd();
        expect(line.split('\n')).toHaveLength(1);
        expect(plain).toContain(line);
      }

      for (const failOn of ['hard', 'never']) {
        const [onTerminal, whenPiped] = await Promise.all([
          runInPty(['gates', 'check', '--fail-on', failOn], { env }),
          runCli(['gates', 'check', '--fail-on', failOn], { env }),
        ]);
        expect(onTerminal.exitCode, `--fail-on ${failOn}`).toBe(whenPiped.exitCode);
      }
    });

    // stdout and stderr share the terminal: the verdict (stderr) must follow the list it sums up.
    it('gates check prints the verdict line below the gate list on a terminal', async () => {
      const tty = await runInPty(['gates', 'check'], { env });
      expect(tty.exitCode).toBeGreaterThan(0); // the seeded workspace fails its gates
      const lines = stripAnsi(tty.output).trimEnd().split('\n');
      expect(lines[0]).toMatch(/^(✓ pass|! soft fail|✗ HARD FAIL) /);
      expect(lines.at(-1)).toMatch(/^govctl: .*gates? failing.*: exit [12]; /);
    });
  });

  describe('evidence import progress', () => {
    // cli-progress draws the bar's first frame when the import starts and its last when it ends,
    // whatever the size; 600 records are two requests of the import's 500-record batches, so the
    // bar spans more than one write. (3 000 cost a second of CPU and proved nothing more.)
    const COUNT = 600;
    let file: string;

    beforeAll(() => {
      file = join(makeTempDir('govctl-tty-'), 'records.ndjson');
      const lines: string[] = [];
      for (let n = 0; n < COUNT; n++) lines.push(JSON.stringify(changeRecord('tty-import', n)));
      writeFileSync(file, lines.join('\n') + '\n');
    });

    it('shows a progress bar on stderr when stderr is a terminal and stdout is a file', async () => {
      const results = join(makeTempDir('govctl-tty-'), 'results.tsv');
      const result = await runInPty(['evidence', 'import', file], { env, stdoutTo: results, timeout: 60_000 });
      expect(result.exitCode).toBe(0);
      // cli-progress: `importing [████░░…] 42% | 128 KiB | 464 records, 0 failed`, redrawn in place
      const plain = stripAnsi(result.output);
      expect(plain).toMatch(/importing \[[█░]+\] \d+% \| \d+ KiB \| \d+ records, 0 failed/);
      expect(plain).toMatch(/\[[░]+\] 0% \| 0 KiB \| 0 records, 0 failed/);
      expect(result.output).toMatch(/\x1b\[\?25l/); // cursor hidden while drawing …
      expect(result.output).toMatch(/\x1b\[\?25h/); // … and shown again
      expect(plain).toMatch(new RegExp(`govctl: imported ${COUNT} records in \\d+\\.\\d s\\n$`));
      const lines = readFileSync(results, 'utf8').trimEnd().split('\n');
      expect(lines).toHaveLength(COUNT);
      expect(lines.every((line) => line.startsWith('ok\t'))).toBe(true);
      expect(readFileSync(results, 'utf8')).not.toMatch(ANY_ESCAPE);
    });

    it('shows no progress piped: stderr holds only the summary', async () => {
      const result = await runCli(['evidence', 'import', file], { env, timeout: 60_000 });
      expect(result.exitCode).toBe(0);
      expect(result.stderr).toMatch(new RegExp(`^govctl: imported ${COUNT} records in \\d+\\.\\d s\\n$`));
      expect(result.stdout.trimEnd().split('\n')).toHaveLength(COUNT);
      expect(result.stdout).not.toMatch(ANY_ESCAPE);
    });

    it('draws no bar when the result lines go to the same terminal: they are the progress', async () => {
      const input = [0, 1, 2].map((n) => JSON.stringify(changeRecord('tty-import-few', n))).join('\n');
      const result = await runInPty(['evidence', 'import', '-'], { env, input });
      expect(result.exitCode).toBe(0);
      const plain = stripAnsi(result.output);
      expect(plain).not.toContain('importing [');
      expect(plain).toMatch(/^ok\t0\trec_\S+\t/m);
      expect(result.output).toMatch(/\x1b\[32mok\x1b\[39m\t0\t/); // `ok` in green
      expect(plain).toMatch(/^govctl: imported 3 records in \d+\.\d s$/m);
    });

    // Writes are batched per stream; a stream pushes out the other's queue before queuing, so the
    // summary (stderr) cannot overtake the last result lines (stdout).
    it('prints the summary after the result lines when both go to the terminal', async () => {
      const small = join(makeTempDir('govctl-tty-'), 'few.ndjson');
      writeFileSync(small, [0, 1, 2].map((n) => JSON.stringify(changeRecord('tty-import-order', n))).join('\n'));
      const result = await runInPty(['evidence', 'import', small], { env });
      expect(result.exitCode).toBe(0);
      const lines = stripAnsi(result.output).trimEnd().split('\n');
      expect(lines.slice(0, 3).map((line) => line.split('\t').slice(0, 2).join(' '))).toEqual(['ok 0', 'ok 1', 'ok 2']);
      expect(lines[3]).toMatch(/^govctl: imported 3 records in \d+\.\d s$/);
    });
  });

  describe('--json on a terminal', () => {
    it('prints exactly the service body, indented, and nothing else', async () => {
      for (const [args, path] of [
        [['posture', '--json'], 'grc/posture-brief'],
        [['systems', '--json'], 'grc/systems'],
        [['evidence', 'list', '--system', SYSTEM, '--json'], `grc/evidence?system_name=${SYSTEM}`],
      ] as const) {
        const result = await runInPty(args, { env });
        const direct = await service('GET', path);
        expect(result.exitCode, args.join(' ')).toBe(0);
        // base URL and key from the environment: no notice on stderr, so the output is stdout
        expect(result.output).toMatch(/^\{\n {2}"/);
        expect(result.output.endsWith('}\n')).toBe(true);
        expect(result.output).not.toMatch(ANY_ESCAPE);
        expect(JSON.parse(result.output)).toEqual(direct.body);
      }
    });
  });

  describe('secrets', () => {
    it('never shows the API key on a terminal, with -v or in config show', async () => {
      const keyPart = server.apiKey.slice(3, 15);
      const runs = await Promise.all([
        runInPty(['posture', '-v'], { env }),
        runInPty(['evidence', 'list', '--system', SYSTEM, '-v'], { env }),
        runInPty(
          [
            'evidence',
            'add',
            'change_event',
            '--system',
            'tty-secret',
            '--type',
            'deployment',
            '--by',
            'ci@example.com',
            '--description',
            'x',
            '--environment',
            'production',
            '-v',
          ],
          { env },
        ),
        runInPty(['whoami', '-v', '--json'], { env }),
        runInPty(['config', 'show', '-v'], { env }),
      ]);
      for (const result of runs) {
        expect(result.exitCode).toBe(0);
        expect(result.output).not.toContain(server.apiKey);
        expect(result.output).not.toContain(keyPart);
      }
      // -v traced the requests, with the header masked
      for (const result of runs.slice(0, 4))
        expect(stripAnsi(result.output)).toMatch(/GET http:\/\/127\.0\.0\.1:\d+\/api\/\S* authorization: Bearer \*\*\* → 200 in \d+ ms/);
      expect(stripAnsi(runs[2].output)).toMatch(/POST \S+\/grc\/evidence authorization: Bearer \*\*\* → 201/);
    });

    it('keeps a key read from a file off the terminal too', async () => {
      const home = makeHome();
      writeFileSync(join(home, 'api.key'), `${server.apiKey}\n`, { mode: 0o600 });
      const result = await runInPty(['whoami', '-v', '--api-key-file', 'api.key', '--base-url', server.url], { home });
      expect(result.exitCode).toBe(0);
      expect(stripAnsi(result.output)).toContain(server.workspaceId);
      expect(result.output).not.toContain(server.apiKey);
    });
  });
});
