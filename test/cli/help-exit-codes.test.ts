/**
 * `govctl help exit-codes` and `govctl help <command>`: the exit code table from its one source
 * (EXIT_CODE_MEANINGS), mirrored by docs/exit-codes.md.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT_CODE_MEANINGS } from '../../src/cli/exit-codes.js';
import { runCli } from '../helpers/cli.js';

describe('govctl help exit-codes', () => {
  it('prints every code and its meaning, tab-separated when piped', async () => {
    const result = await runCli(['help', 'exit-codes'], {});
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(EXIT_CODE_MEANINGS.map(({ code, meaning }) => `${code}\t${meaning}\n`).join(''));
    expect(
      result.stdout
        .split('\n')
        .map((line) => line.split('\t')[0])
        .filter(Boolean),
    ).toEqual(['0', '1', '2', '64', '65', '66', '69', '70', '75', '77', '78', '130']);
  });

  it('prints {exit_codes: [{code, meaning}]} with --json', async () => {
    const result = await runCli(['help', 'exit-codes', '--json'], {});
    expect(JSON.parse(result.stdout)).toEqual({ exit_codes: EXIT_CODE_MEANINGS.map(({ code, meaning }) => ({ code, meaning })) });
  });

  it.each(['docs/exit-codes.md'])('is mirrored exactly by %s', (file) => {
    const doc = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| (\d+) \| (.+) \|$/gm)].map((match) => ({ code: Number(match[1]), meaning: match[2] }));
    expect(rows).toEqual(EXIT_CODE_MEANINGS.map(({ code, meaning }) => ({ code, meaning })));
  });
});

describe('govctl help <command>', () => {
  it('prints the help of a command on stdout, and 64 for an unknown one', async () => {
    const help = await runCli(['help', 'gates', 'check'], {});
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toMatch(/Usage: govctl gates check/);
    expect(help.stdout).toMatch(/--fail-on/);
    expect((await runCli(['help', 'nonsense'], {})).exitCode).toBe(64);
  });

  it('gives every new command help text with examples', async () => {
    for (const command of [
      ['posture'],
      ['systems'],
      ['gates', 'check'],
      ['derive'],
      ['config', 'show'],
      ['config', 'init'],
      ['serve'],
      ['admin', 'init'],
      ['admin', 'api-key', 'create'],
      ['admin', 'api-key', 'list'],
      ['admin', 'api-key', 'revoke'],
      ['admin', 'gates', 'set'],
      ['admin', 'gates', 'show'],
      ['completion'],
      ['help', 'exit-codes'],
    ]) {
      const result = await runCli([...command, '--help'], {});
      expect(result.exitCode, command.join(' ')).toBe(0);
      expect(result.stdout, command.join(' ')).toMatch(/Examples:\n {2}\$ govctl /);
    }
  });
});
