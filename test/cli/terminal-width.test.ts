/**
 * Tables fit the terminal, on a real pseudo-terminal of 80 columns (util-linux `script`, see
 * test/helpers/pty.ts) against a real service (127.0.0.1, a real SQLite file): `evidence list`,
 * `systems` and `derive` draw no line wider than the terminal (so the terminal never wraps them),
 * cut ids in the middle (both ends kept), and piped output stays tab-separated and whole.
 */
import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { HAS_SCRIPT, PTY_SKIP_REASON, runInPty, stripAnsi } from '../helpers/pty.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Long on purpose: at full width these tables are 124, 99 and ~150 columns wide.
const SYSTEM = 'consumer-loan-scorer-production-eu-west-1';
const COLUMNS = 80;

let server: TestServer;
let env: Record<string, string>;

async function seed(record: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${server.url}/api/workspaces/${server.workspaceId}/governance/grc/evidence`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(record),
  });
  if (response.status >= 300) throw new Error(`seeding failed: ${response.status} ${await response.text()}`);
}

beforeAll(async () => {
  await ensureBuilt();
  server = await startTestServer({ rateLimitPerMinute: 1_000_000 });
  env = { SERVICE_BASE_URL: server.url, SERVICE_API_KEY: server.apiKey };
  for (let n = 0; n < 3; n++) {
    await seed({
      record_type: 'change_event',
      system_name: SYSTEM,
      payload: { type: 'deployment', by: 'release-automation@example.com', description: `release ${n}`, environment: 'production', system: SYSTEM },
    });
  }
});

afterAll(async () => {
  await server?.stop();
});

/** The lines of a terminal's output, colour removed. */
function lines(output: string): string[] {
  return stripAnsi(output).trimEnd().split('\n');
}

/** The widest line, in terminal columns. */
function widest(output: string): number {
  return Math.max(...lines(output).map((line) => stringWidth(line)));
}

describe.skipIf(!HAS_SCRIPT)(HAS_SCRIPT ? `tables on a real terminal of ${COLUMNS} columns` : `tables on a real terminal (skipped: ${PTY_SKIP_REASON})`, () => {
  it('evidence list fits, with record ids whole, the system cut at the end and optional columns left out', async () => {
    const tty = await runInPty(['evidence', 'list', '--system', SYSTEM], { env, columns: COLUMNS });
    expect(tty.exitCode, tty.output).toBe(0);
    expect(widest(tty.output), tty.output).toBeLessThanOrEqual(COLUMNS);
    const piped = await runCli(['evidence', 'list', '--system', SYSTEM], { env });
    const ids = piped.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split('\t')[0]);
    expect(ids).toHaveLength(3);
    const shown = stripAnsi(tty.output);
    for (const id of ids) expect(shown).toContain(id);
    expect(shown).toMatch(/consumer\S*… /);
    expect(shown).toMatch(/change_event /);
    expect(shown).not.toContain('SOURCE');
    expect(shown).toContain('just now');
  });

  it('systems fits, its id whole', async () => {
    const tty = await runInPty(['systems', '--name', SYSTEM], { env, columns: COLUMNS });
    expect(tty.exitCode, tty.output).toBe(0);
    expect(widest(tty.output)).toBeLessThanOrEqual(COLUMNS);
    expect(stripAnsi(tty.output)).toMatch(/sys_[0-9a-f-]{36}/);
    expect(stripAnsi(tty.output)).toMatch(/SYSTEM.*ID.*REGISTERED/);
  });

  it('derive fits by wrapping the controls onto more lines, every control still shown', async () => {
    const args = ['derive', '--description', 'Scores consumer loan applications using the OpenAI API; deployed via CI', '--risk-tier', 'high'];
    const tty = await runInPty(args, { env, columns: COLUMNS });
    expect(tty.exitCode, tty.output).toBe(0);
    expect(widest(tty.output)).toBeLessThanOrEqual(COLUMNS);
    const shown = stripAnsi(tty.output);
    const piped = await runCli(args, { env });
    const controls = piped.stdout
      .trimEnd()
      .split('\n')
      .flatMap((line) => line.split('\t')[2].split(','));
    expect(controls.length).toBeGreaterThan(20);
    for (const control of controls) expect(shown).toContain(control);
  });

  it('keeps the full table on a wide terminal', async () => {
    const tty = await runInPty(['evidence', 'list', '--system', SYSTEM], { env, columns: 200 });
    expect(tty.exitCode).toBe(0);
    expect(stripAnsi(tty.output)).toContain(SYSTEM);
    expect(stripAnsi(tty.output)).not.toContain('…');
  });

  it('prints help wrapped to the terminal', async () => {
    const tty = await runInPty(['evidence', 'list', '--help'], { columns: 60 });
    expect(tty.exitCode).toBe(0);
    const tooWide = lines(tty.output).filter((line) => stringWidth(line) > 60 && !/^\s*\$ /.test(line));
    expect(tooWide).toEqual([]);
  });
});

describe('piped output is not fitted', () => {
  it('keeps every value whole and tab-separated, whatever COLUMNS says', async () => {
    const piped = await runCli(['evidence', 'list', '--system', SYSTEM], { env: { ...env, COLUMNS: '40' } });
    expect(piped.exitCode).toBe(0);
    for (const row of piped.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split('\t'))) {
      expect(row[0]).toMatch(/^rec_[0-9a-f-]{36}$/);
      expect(row[2]).toBe(SYSTEM);
    }
    expect(piped.stdout).not.toContain('…');
  });
});
