/**
 * `govctl completion bash|zsh|fish`: scripts generated from the program tree. The bash script is
 * checked with `bash -n` and then sourced and run against command lines; zsh and fish scripts are
 * syntax-checked when those shells are installed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECORD_TYPES } from '../../src/core/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/cli-fixtures.js';

const temp = tempDir();
const scripts: Record<string, string> = {};

beforeAll(async () => {
  for (const shell of ['bash', 'zsh', 'fish']) {
    const result = await runCli(['completion', shell], {});
    if (result.exitCode !== 0) throw new Error(`completion ${shell} failed: ${result.stderr}`);
    scripts[shell] = result.stdout;
    writeFileSync(join(temp.dir, `govctl.${shell}`), result.stdout);
  }
});
afterAll(() => temp.remove());

const hasShell = (shell: string) => spawnSync(shell, ['-c', 'exit 0']).status === 0;

/** Runs the bash completion function on a command line; returns COMPREPLY. */
function complete(line: string[]): string[] {
  const words = line.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  const program = `source '${join(temp.dir, 'govctl.bash')}'
COMP_WORDS=(${words}); COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 )); COMPREPLY=()
_govctl_complete
printf '%s\\n' "\${COMPREPLY[@]}"`;
  return execFileSync('bash', ['-c', program], { encoding: 'utf8' }).split('\n').filter(Boolean);
}

describe('govctl completion bash', () => {
  it('is valid bash (bash -n) and registers the completion for govctl', () => {
    const check = spawnSync('bash', ['-n', join(temp.dir, 'govctl.bash')], { encoding: 'utf8' });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
    expect(scripts.bash).toMatch(/^complete -F _govctl_complete govctl$/m);
  });

  it('completes commands, subcommands, flags, flag values and the record types of evidence add', () => {
    expect(complete(['govctl', ''])).toEqual(expect.arrayContaining(['posture', 'systems', 'gates', 'derive', 'config', 'serve', 'admin', 'completion', 'help', 'evidence']));
    expect(complete(['govctl', 'ga'])).toEqual(['gates']);
    expect(complete(['govctl', 'gates', ''])).toEqual(['check']);
    expect(complete(['govctl', 'gates', 'check', '--f'])).toEqual(['--fail-on', '--format']);
    expect(complete(['govctl', 'gates', 'check', '--format', ''])).toEqual(['table', 'json', 'junit', 'github']);
    expect(complete(['govctl', '--base-url', 'local', 'gates', 'check', '--fail-on', 'h'])).toEqual(['hard']);
    expect(new Set(complete(['govctl', 'evidence', 'add', '']))).toEqual(new Set(RECORD_TYPES));
    expect(complete(['govctl', 'evidence', 'add', 'change_event', '--ch'])).toEqual(['--change-id']);
    expect(complete(['govctl', 'admin', 'gates', 'set', ''])).toEqual(['eu_ai_act', 'iso_42001', 'soc2_type2', 'iso_27001', 'nist_airf']);
    expect(complete(['govctl', 'completion', ''])).toEqual(['bash', 'zsh', 'fish']);
    expect(complete(['govctl', 'posture', '--js'])).toEqual(['--json']);
    expect(complete(['govctl', 'derive', '--risk-tier', ''])).toEqual(['unacceptable', 'high', 'limited', 'minimal']);
  });

  it('explains how to install it in the help', async () => {
    const help = await runCli(['completion', '--help'], {});
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toMatch(/bash-completion\/completions\/govctl/);
    expect(help.stdout).toMatch(/fish\/completions\/govctl\.fish/);
  });

  it('refuses an unknown shell', async () => {
    expect((await runCli(['completion', 'powershell'], {})).exitCode).toBe(64);
  });
});

describe('govctl completion zsh and fish', () => {
  it('name every command path', () => {
    expect(scripts.zsh).toMatch(/^#compdef govctl/);
    expect(scripts.zsh).toContain("'gates check:--format') compadd -- table json junit github");
    expect(scripts.fish).toContain("complete -c govctl -n '__govctl_at \\'gates check\\'' -l format -x -a 'table json junit github'");
    for (const type of RECORD_TYPES) expect(scripts.fish).toContain(`-a ${type}`);
  });

  it.skipIf(!hasShell('zsh'))('zsh -n accepts the zsh script', () => {
    expect(spawnSync('zsh', ['-n', join(temp.dir, 'govctl.zsh')]).status).toBe(0);
  });

  it.skipIf(!hasShell('fish'))('fish --no-execute accepts the fish script', () => {
    expect(spawnSync('fish', ['--no-execute', join(temp.dir, 'govctl.fish')]).status).toBe(0);
  });
});
