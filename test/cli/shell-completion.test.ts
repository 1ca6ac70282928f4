/**
 * Shell completion: the hidden `govctl __complete -- <words…>` answers in-process (subcommands,
 * flags, the catalogue's enum values, the file and directory directives, every command of the
 * program), and the scripts that ask it: the bash one is sourced and asked for completions against
 * the built command line; zsh, fish and PowerShell are syntax-checked where those shells exist
 * (skipped, with the reason, where they do not).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFactory } from '../../src/cli/factory.js';
import { createMemoryIO } from '../../src/cli/io.js';
import { createProgram } from '../../src/cli/program.js';
import { ENVIRONMENTS, RECORD_TYPES } from '../../src/core/index.js';
import { RISK_LEVELS } from '../../src/core/records/ai-risk-assessment.js';
import { BIN, ensureBuilt, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/cli-fixtures.js';

/** The answer of `govctl __complete -- words…`, run in-process: the values and the directive. */
async function ask(...words: string[]): Promise<{ values: string[]; lines: string[]; directive: number }> {
  const result = await runCli(['__complete', '--', ...words]);
  expect(result.exitCode, result.stderr).toBe(0);
  expect(result.stderr).toBe('');
  const lines = result.stdout.trimEnd().split('\n');
  const last = lines.pop()!;
  expect(last).toMatch(/^:\d+$/);
  return { values: lines.map((line) => line.split('\t')[0]), lines, directive: Number(last.slice(1)) };
}

describe('govctl __complete', () => {
  it('offers the commands at the root, with descriptions, and never the hidden one', async () => {
    const answer = await ask('');
    expect(answer.values).toEqual(expect.arrayContaining(['evidence', 'attest', 'gates', 'completion', 'help']));
    expect(answer.values).not.toContain('__complete');
    expect(answer.lines.find((line) => line.startsWith('evidence\t'))).toMatch(/^evidence\t.*evidence records/);
    expect(answer.directive).toBe(0);
  });

  it('filters by the word typed, and offers subcommands and record types', async () => {
    expect((await ask('ev')).values).toEqual(['evidence']);
    expect((await ask('evidence', '')).values).toEqual(['add', 'export', 'import', 'list', 'sign', 'verify']);
    expect((await ask('evidence', 'add', '')).values.sort()).toEqual([...RECORD_TYPES].sort());
  });

  it("offers a command's own flags and the global ones", async () => {
    const flags = (await ask('evidence', 'list', '--')).values;
    expect(flags).toEqual(expect.arrayContaining(['--system', '--json', '--base-url', '--help']));
    expect((await ask('evidence', 'add', 'ai_risk_assessment', '--risk')).values).toEqual(['--risk-level', '--risk-summary']);
  });

  it("completes enum values from the catalogue and commander's choices, after a space or an =", async () => {
    expect((await ask('evidence', 'add', 'ai_risk_assessment', '--risk-level', '')).values).toEqual([...RISK_LEVELS]);
    expect((await ask('evidence', 'add', 'ai_risk_assessment', '--risk-level=h')).values).toEqual(['--risk-level=high']);
    expect((await ask('evidence', 'add', 'change_event', '--environment', '')).values).toEqual([...ENVIRONMENTS]);
    expect((await ask('evidence', 'add', 'governance_review', '--framework-reviewed', 'iso')).values).toEqual(['iso_42001', 'iso_27001']);
    expect((await ask('gates', 'check', '--format', '')).values).toEqual(['table', 'json', 'junit', 'github']);
    expect((await ask('--on-error', '')).values).toEqual(['warn', 'raise', 'silent']);
    expect((await ask('completion', '')).values).toEqual(['bash', 'zsh', 'fish', 'powershell']);
  });

  it('tells the shell to complete file names for file arguments and file flags, directories for dir flags', async () => {
    for (const words of [
      ['evidence', 'import', ''],
      ['evidence', 'sign', ''],
      ['evidence', 'verify', ''],
      ['attest', 'batch', ''],
      ['attest', 'summarise', '--input', ''],
      ['attest', 'summarise', '--output', ''],
      ['evidence', 'add', 'model_evaluation', '--payload-file', ''],
      ['--api-key-file', ''],
    ]) {
      expect({ words, directive: (await ask(...words)).directive }).toEqual({ words, directive: 1 });
    }
    expect((await ask('--data-dir', '')).directive).toBe(2);
    // Free text completes nothing, not file names.
    expect(await ask('evidence', 'add', 'ai_risk_assessment', '--risk-summary', '')).toMatchObject({ values: [], directive: 0 });
  });

  it("reads `attest <tool>` as the default subcommand: the tool's flags follow a free tool name", async () => {
    expect((await ask('attest', 'summarise', '--input-h')).values).toEqual(['--input-hash']);
    expect((await ask('attest', '')).values).toEqual(expect.arrayContaining(['push', 'batch', 'sign', 'verify', 'list']));
  });

  it('skips flag values and takes words after -- as arguments', async () => {
    // `evidence` is the value of --system here: the next word is still a command.
    expect((await ask('--system', 'evidence', '')).values).toContain('attest');
    expect((await ask('--system', 'x', 'evidence', '')).values).toContain('add');
    expect((await ask('evidence', 'import', '--', '--')).directive).toBe(1);
  });

  it('offers every command of the program under its parent (generated from the tree, it cannot drift)', async () => {
    const program = await createProgram(
      createFactory({ io: createMemoryIO(), env: {}, cwd: '/', globals: () => ({}), signal: new AbortController().signal }),
      {},
    );
    const paths: string[][] = [];
    const walk = (command: Command, path: string[]) => {
      for (const sub of command.commands) {
        if ((sub as Command & { _hidden?: boolean })._hidden) continue;
        paths.push([...path, sub.name()]);
        walk(sub, [...path, sub.name()]);
      }
    };
    walk(program, []);
    expect(paths.length).toBeGreaterThan(50);
    // each parent asked once (its answer is the same for each of its commands)
    const offeredUnder = new Map<string, Promise<string[]>>();
    const missing: string[] = [];
    for (const path of paths) {
      const parent = path.slice(0, -1);
      const key = parent.join(' ');
      if (!offeredUnder.has(key))
        offeredUnder.set(
          key,
          ask(...parent, '').then((answer) => answer.values),
        );
      const offered = await offeredUnder.get(key)!;
      if (!offered.includes(path.at(-1)!)) missing.push(path.join(' '));
    }
    expect(missing).toEqual([]);
  });
});

const temp = tempDir();
const scripts: Record<string, string> = {};
const SHELLS = ['bash', 'zsh', 'fish', 'powershell'] as const;

beforeAll(async () => {
  await ensureBuilt();
  for (const shell of SHELLS) {
    const result = await runCli(['completion', shell]);
    if (result.exitCode !== 0) throw new Error(`completion ${shell} failed: ${result.stderr}`);
    scripts[shell] = result.stdout;
    writeFileSync(join(temp.dir, `govctl.${shell}`), result.stdout);
  }
  mkdirSync(join(temp.dir, 'work', 'reports'), { recursive: true });
  writeFileSync(join(temp.dir, 'work', 'records.ndjson'), '');
  writeFileSync(join(temp.dir, 'work', 'results.ndjson'), '');
});
afterAll(() => temp.remove());

const hasShell = (shell: string, args: string[] = ['-c', 'exit 0']) => spawnSync(shell, args).status === 0;

/**
 * Sources the bash script and runs its completion function on COMP_WORDS (split as bash splits a
 * command line, `=` a word of its own); `govctl` is a function running the built command line.
 * Returns COMPREPLY, sorted.
 */
function bashComplete(...words: string[]): string[] {
  const quoted = words.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  const program = `govctl() { "$CLI_NODE" "$CLI_BIN" "$@"; }
source '${join(temp.dir, 'govctl.bash')}'
COMP_WORDS=(${quoted}); COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 )); COMPREPLY=()
_govctl_complete
printf '%s\\n' "\${COMPREPLY[@]}"`;
  const out = execFileSync('bash', ['-c', program], {
    encoding: 'utf8',
    cwd: join(temp.dir, 'work'),
    env: { PATH: process.env.PATH, CLI_NODE: process.execPath, CLI_BIN: BIN, HOME: temp.dir },
  });
  return out.split('\n').filter(Boolean).sort();
}

describe('govctl completion bash', () => {
  it('is valid bash (bash -n), asks govctl __complete and registers the completion for govctl', () => {
    expect(spawnSync('bash', ['-n', join(temp.dir, 'govctl.bash')]).status).toBe(0);
    expect(scripts.bash).toContain('__complete --');
    expect(scripts.bash).toMatch(/^complete -F _govctl_complete govctl$/m);
  });

  it('completes commands, subcommands, flags and enum values when sourced', () => {
    expect(bashComplete('govctl', 'ev')).toEqual(['evidence']);
    expect(bashComplete('govctl', 'attest', 'bat')).toEqual(['batch']);
    expect(bashComplete('govctl', 'evidence', 'add', 'ai_risk_assessment', '--risk-level', '')).toEqual([...RISK_LEVELS].sort());
    expect(bashComplete('govctl', 'evidence', 'list', '--sys')).toEqual(['--system']);
  });

  it('completes the value after --flag=, as bash splits it at the =', () => {
    expect(bashComplete('govctl', 'evidence', 'add', 'ai_risk_assessment', '--risk-level', '=')).toEqual([...RISK_LEVELS].sort());
    expect(bashComplete('govctl', 'evidence', 'add', 'ai_risk_assessment', '--risk-level', '=', 'li')).toEqual(['limited']);
  });

  it('completes file names for file arguments and --input, directories for --data-dir', () => {
    expect(bashComplete('govctl', 'evidence', 'import', 'rec')).toEqual(['records.ndjson']);
    expect(bashComplete('govctl', 'attest', 'summarise', '--input', 're')).toEqual(['records.ndjson', 'reports', 'results.ndjson']);
    expect(bashComplete('govctl', '--data-dir', 're')).toEqual(['reports']);
  });
});

describe('govctl completion --help', () => {
  it("lists each shell's install step on lines of its own, wrapped to 80 columns", async () => {
    const help = await runCli(['completion', '--help']);
    expect(help.exitCode).toBe(0);
    const lines = help.stdout.split('\n');
    for (const shell of ['bash', 'zsh', 'fish', 'powershell'])
      expect(
        lines.filter((line) => line.startsWith(`  ${shell}: `)),
        shell,
      ).toHaveLength(1);
    expect(help.stdout).not.toMatch(/source <\(govctl completion bash\) zsh:/);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
  });
});

describe('govctl completion zsh, fish and powershell', () => {
  it('each script asks govctl __complete and holds no command list of its own', () => {
    expect(scripts.zsh).toMatch(/^#compdef govctl/);
    for (const shell of ['zsh', 'fish', 'powershell']) {
      expect(scripts[shell]).toContain('__complete --');
      expect(scripts[shell]).not.toContain('ai_risk_assessment');
    }
    expect(scripts.powershell).toContain('Register-ArgumentCompleter -Native -CommandName govctl');
  });

  it.skipIf(!hasShell('zsh'))('zsh -n accepts the zsh script', () => {
    expect(spawnSync('zsh', ['-n', join(temp.dir, 'govctl.zsh')]).status).toBe(0);
  });

  it.skipIf(!hasShell('fish'))('fish --no-execute accepts the fish script', () => {
    expect(spawnSync('fish', ['--no-execute', join(temp.dir, 'govctl.fish')]).status).toBe(0);
  });

  it.skipIf(!hasShell('zsh'))('zsh lists what govctl __complete answers, on an interactive zsh (zpty)', () => {
    // An interactive zsh on a pseudo-terminal (zsh/zpty) with compinit and the script loaded: a
    // line is typed with a Tab, and what zsh draws is read until the awaited word appears (the
    // run is bounded by the timeout below, not by a sleep).
    const session = (line: string, awaited: string) => `zpty -b z 'zsh -f -i'
zpty -w z 'autoload -Uz compinit; compinit -u -D; govctl() { "$CLI_NODE" "$CLI_BIN" "$@"; }; source ${join(temp.dir, 'govctl.zsh')}; cd ${join(temp.dir, 'work')}'
zpty -w -n z $'${line}\t'
zpty -r z out '*${awaited}*'
print -r -- "$out"
zpty -d z`;
    const script = `zmodload zsh/zpty
${session('govctl evidence add ai_risk_assessment --risk-level ', 'unacceptable')}
print -r -- '=== files'
${session('govctl evidence import re', 'results.ndjson')}`;
    const out = execFileSync('zsh', ['-f', '-c', script], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { PATH: process.env.PATH, CLI_NODE: process.execPath, CLI_BIN: BIN, HOME: temp.dir },
    }).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    const [levels, files] = out.split('=== files');
    for (const level of RISK_LEVELS) expect(levels).toMatch(new RegExp(`(^|\\s)${level}\\s`));
    for (const file of ['records.ndjson', 'reports/', 'results.ndjson']) expect(files).toContain(file);
  });

  it.skipIf(!hasShell('fish'))('fish offers what govctl __complete answers, with descriptions, values and file names', () => {
    const fishComplete = (line: string) =>
      execFileSync('fish', ['-c', `function govctl; "$CLI_NODE" "$CLI_BIN" $argv; end; source '${join(temp.dir, 'govctl.fish')}'; complete -C"${line}"`], {
        encoding: 'utf8',
        cwd: join(temp.dir, 'work'),
        env: { PATH: process.env.PATH, CLI_NODE: process.execPath, CLI_BIN: BIN, HOME: temp.dir },
      })
        .split('\n')
        .filter(Boolean);
    expect(fishComplete('govctl ev')).toEqual([expect.stringMatching(/^evidence\t.*evidence records/)]);
    expect(fishComplete('govctl evidence add ai_risk_assessment --risk-level ').sort()).toEqual([...RISK_LEVELS].sort());
    expect(fishComplete('govctl evidence add ai_risk_assessment --risk-level=li')).toEqual(['--risk-level=limited']);
    expect(fishComplete('govctl evidence import rec')).toEqual(['records.ndjson']);
  });

  it.skipIf(!hasShell('pwsh', ['-NoProfile', '-Command', 'exit 0']))('PowerShell parses the script without errors', () => {
    const check = `$errors = $null; [System.Management.Automation.Language.Parser]::ParseFile('${join(temp.dir, 'govctl.powershell')}', [ref]$null, [ref]$errors) | Out-Null; exit $errors.Count`;
    expect(spawnSync('pwsh', ['-NoProfile', '-Command', check]).status).toBe(0);
  });
});

describe('govctl completion', () => {
  it('explains how to install each script in the help', async () => {
    const help = await runCli(['completion', '--help']);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toMatch(/bash-completion\/completions\/govctl/);
    expect(help.stdout).toMatch(/fish\/completions\/govctl\.fish/);
    expect(help.stdout).toMatch(/Invoke-Expression/);
  });

  it('refuses an unknown shell', async () => {
    expect((await runCli(['completion', 'tcsh'])).exitCode).toBe(64);
  });
});
