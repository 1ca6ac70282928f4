/**
 * Fitting output to the terminal, in-process with a set width (the real-terminal runs are in
 * terminal-width.test.ts): cutting and wrapping by display width (East Asian wide characters and
 * emoji count two columns), widest column first, ids cut in the middle, borders dropped when even
 * the minimums do not fit in a box, piped output untouched; help wrapped to the width with the
 * global options shown once; bare groups and mistyped subcommands.
 */
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { EXIT_CODE_MEANINGS } from '../../src/cli/exit-codes.js';
import { createMemoryIO } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { printTable, type Column } from '../../src/cli/render.js';
import { fitWidths, truncateEnd, truncateMiddle, wrapCell, wrapHelpText } from '../../src/cli/table-fit.js';
import { cleanEnv, makeHome, runCli } from '../helpers/cli.js';

const plain = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '');
const widest = (text: string) =>
  Math.max(
    ...plain(text)
      .trimEnd()
      .split('\n')
      .map((line) => stringWidth(line)),
  );

/** Runs govctl in-process on a memory "terminal" of the given width. */
async function onTerminal(argv: string[], columns: number): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const home = makeHome();
  const env = cleanEnv(home);
  const io = createMemoryIO({ isTTY: true, columns, env, noColor: true });
  const exitCode = await main(argv, { io, env, cwd: home });
  return { stdout: io.stdoutText(), stderr: io.stderrText(), exitCode };
}

describe('cutting and wrapping by display width', () => {
  it('cuts at the end or in the middle with one ellipsis, counting wide characters as two columns', () => {
    expect(truncateEnd('loan-scorer-production', 12)).toBe('loan-scorer…');
    expect(truncateEnd('short', 12)).toBe('short');
    expect(truncateMiddle('rec_01a20b24-5cb7-7540-aa8d-40a1ed04ae24', 15)).toBe('rec_01a…d04ae24');
    expect(stringWidth(truncateMiddle('rec_01a20b24-5cb7-7540-aa8d-40a1ed04ae24', 15))).toBe(15);
    // 融资评分系统 is 12 columns wide: cut to 7 it keeps three characters (6 columns) and the ellipsis.
    expect(truncateEnd('融资评分系统', 7)).toBe('融资评…');
    expect(stringWidth(truncateEnd('信用🙂🙂🙂🙂', 7))).toBeLessThanOrEqual(7);
    // A grapheme is never split: the flag and the accent stay whole.
    expect(truncateEnd('🇪🇺🇪🇺🇪🇺', 5)).toBe('🇪🇺🇪🇺…');
    expect(truncateEnd('cafe\u0301s-and-more', 5)).toBe('cafe\u0301…');
  });

  it('wraps at spaces, breaking only a word wider than the line', () => {
    expect(wrapCell('EUAIA_ART9, ISO42001_A6_1, SOC2_CC3_1', 14)).toEqual(['EUAIA_ART9,', 'ISO42001_A6_1,', 'SOC2_CC3_1']);
    expect(wrapCell('ABCDEFGHIJ', 4)).toEqual(['ABCD', 'EFGH', 'IJ']);
  });

  it('takes width from the widest column first and never below a minimum', () => {
    expect(
      fitWidths(
        [
          { natural: 40, min: 11 },
          { natural: 12, min: 8 },
          { natural: 6, min: 6 },
        ],
        10,
        50,
      ),
    ).toEqual([22, 12, 6]);
    expect(
      fitWidths(
        [
          { natural: 30, min: 8 },
          { natural: 30, min: 8 },
        ],
        0,
        40,
      ),
    ).toEqual([20, 20]);
    expect(
      fitWidths(
        [
          { natural: 30, min: 20 },
          { natural: 30, min: 20 },
        ],
        0,
        10,
      ),
    ).toEqual([20, 20]);
  });

  it('refills an over-wide help paragraph under its indentation and leaves fitting text and examples alone', () => {
    const text = 'Intro line that is quite long indeed\n  an indented line here\n  $ govctl evidence list --system a-very-long-system-name';
    expect(wrapHelpText(text, 20)).toBe(
      'Intro line that is\nquite long indeed\n  an indented line\n  here\n  $ govctl evidence list --system a-very-long-system-name',
    );
    expect(wrapHelpText('fits\nas written', 20)).toBe('fits\nas written');
    expect(wrapHelpText('Usage: govctl attest <tool-name> [options]', 30)).toBe('Usage: govctl attest\n       <tool-name> [options]');
  });
});

interface Row {
  id: string;
  system: string;
  when: string;
}
const COLUMNS: Column<Row>[] = [
  { header: 'record id', value: (r) => r.id, shrink: 'middle' },
  { header: 'system', value: (r) => r.system },
  { header: 'occurred', value: (r) => r.when, kind: 'time' },
];
const ROWS: Row[] = [
  { id: 'rec_01a20b24-5cb7-7540-aa8d-40a1ed04ae24', system: 'consumer-loan-scorer-production-eu-west-1', when: '2026-03-01T11:55:00Z' },
  { id: 'rec_01a20b24-5cb8-72a8-a2cc-9a4fee65d7fb', system: '融资评分系统-生产环境-欧洲西部', when: '2026-03-01T10:00:00Z' },
];
const context = { now: () => new Date('2026-03-01T12:00:00Z') };

async function table(columns: number, isTTY = true): Promise<string> {
  const io = createMemoryIO({ isTTY, columns, noColor: true });
  await printTable(io.stdout, COLUMNS, ROWS, context);
  await io.flush();
  return io.stdoutText();
}

describe('tables fit the terminal', () => {
  it('draws the full table when it fits', async () => {
    const text = await table(200);
    expect(text).toContain(ROWS[0].id);
    expect(text).toContain(ROWS[1].system);
    expect(text).not.toContain('…');
  });

  it('fits 60 columns: ids cut in the middle, text at the end, times whole, wide characters counted as two', async () => {
    const text = await table(60);
    expect(widest(text)).toBeLessThanOrEqual(60);
    expect(text).toMatch(/│ rec_01a2\S*…\S*ae24 /);
    expect(text).toMatch(/│ consumer-loan\S*… /);
    expect(text).toMatch(/│ 融资\S*… /);
    expect(text).toContain('5 minutes ago');
    expect(text).toContain('2 hours ago');
  });

  it('drops the borders, columns two spaces apart, when even the minimums do not fit in a box', async () => {
    const text = await table(40);
    expect(text).not.toMatch(/[│┌└]/);
    expect(widest(text)).toBeLessThanOrEqual(40);
    expect(plain(text).split('\n')[0]).toMatch(/^RECORD ID +SYSTEM +OCCURRED$/);
  });

  it('leaves piped output whole and tab-separated', async () => {
    const text = await table(40, false);
    expect(text).toBe(ROWS.map((r) => `${r.id}\t${r.system}\t${new Date(r.when).toISOString()}\n`).join(''));
  });
});

describe('help on a terminal', () => {
  it("wraps a command's help to the width and shows the global options once, in `help options`", async () => {
    const result = await onTerminal(['evidence', 'list', '--help'], 60);
    expect(result.exitCode).toBe(0);
    const tooWide = result.stdout.split('\n').filter((line) => stringWidth(line) > 60 && !/^\s*\$ /.test(line));
    expect(tooWide).toEqual([]);
    expect(result.stdout).not.toContain('--base-url <url>');
    expect(result.stdout).not.toContain('Global Options:');
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('Global options (--json, --system, …): `govctl help options`.');
  });

  it('points every subcommand at `govctl help options` in its last line', async () => {
    for (const argv of [['attest', 'push'], ['gates', 'check'], ['evidence', 'add', 'change_event'], ['completion']]) {
      const result = await onTerminal([...argv, '--help'], 100);
      expect(result.stdout.trimEnd().split('\n').at(-1), argv.join(' ')).toMatch(/: `govctl help options`\.$/);
      expect(result.stdout, argv.join(' ')).not.toContain('--api-key-file <file');
    }
  });

  it('lists every global option in `govctl help options` and the root help', async () => {
    const options = await runCli(['help', 'options']);
    const root = await runCli(['--help']);
    for (const flag of [
      '--json',
      '--no-color',
      '--verbose',
      '--config',
      '--base-url',
      '--api-key-file',
      '--workspace',
      '--system',
      '--agent',
      '--signing-key-file',
      '--on-error',
      '--data-dir',
      '--ledger-key',
    ]) {
      expect(options.stdout, flag).toContain(flag);
      expect(root.stdout, flag).toContain(flag);
    }
    expect(options.stdout).not.toContain('--api-key ');
  });

  it("ends the root help with every exit code from exit-codes.ts, 1 and 2's gate meanings among them", async () => {
    const root = await runCli(['--help']);
    const footer = root.stdout.slice(root.stdout.indexOf('Exit codes:')).replace(/\s+/g, ' ');
    for (const { code, brief } of EXIT_CODE_MEANINGS) expect(footer).toContain(`${code} ${brief}`);
    expect(footer).toContain('1 soft gate fail');
    expect(footer).toContain('2 hard gate fail');
  });
});

describe('bare groups and mistyped subcommands', () => {
  it('prints the help of a bare group on stdout and exits 0', async () => {
    for (const argv of [[], ['evidence'], ['attest'], ['ledger'], ['admin'], ['evidence', 'add']]) {
      const result = await runCli(argv);
      expect({ argv, exitCode: result.exitCode, stderr: result.stderr }).toEqual({ argv, exitCode: 0, stderr: '' });
      expect(result.stdout).toContain(`Usage: ${['govctl', ...argv].join(' ')}`);
    }
  });

  it("keeps a group's `help <subcommand>`", async () => {
    const result = await runCli(['evidence', 'help', 'list']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('Usage: govctl evidence list');
  });

  it('names the closest subcommand of an unknown one, with 64', async () => {
    const typo = await runCli(['evidence', 'lst']);
    expect(typo).toMatchObject({ exitCode: 64, stdout: '' });
    expect(typo.stderr).toBe("govctl: unknown command 'lst' for 'govctl evidence'; did you mean `govctl evidence list`?\n");
    const far = await runCli(['ledger', 'frobnicate']);
    expect(far.exitCode).toBe(64);
    expect(far.stderr).toBe("govctl: unknown command 'frobnicate' for 'govctl ledger'; see `govctl ledger --help` for its commands\n");
  });

  it('takes a word within two edits of an attest subcommand for a typo, and any other word for a tool name', async () => {
    const typo = await runCli(['attest', 'batchh', 'x']);
    expect(typo.exitCode).toBe(64);
    expect(typo.stderr).toContain("unknown command 'batchh' for 'govctl attest'; did you mean `govctl attest batch`?");
    expect(typo.stderr).toContain('`govctl attest push batchh …`');
    // A tool name far from every subcommand is attested (here: fails for want of a --system, not as a typo).
    const tool = await runCli(['attest', 'summarise', '--input-hash', 'a'.repeat(64), '--output-hash', 'b'.repeat(64)]);
    expect(tool.stderr).not.toContain('unknown command');
    // After --, or with push named, the word is a tool name even when close to a subcommand.
    for (const argv of [
      ['attest', '--', 'batchh'],
      ['attest', 'push', 'batchh'],
    ]) {
      const result = await runCli([...argv, '--input-hash', 'a'.repeat(64), '--output-hash', 'b'.repeat(64)]);
      expect(result.stderr, argv.join(' ')).not.toContain('unknown command');
    }
  });
});
