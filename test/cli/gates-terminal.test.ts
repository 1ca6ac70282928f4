/**
 * `gates check` on an 80-column terminal, on an empty workspace: the verdict first, the blocking
 * gates before the others in one table, the record types to add (control ids only with -v), and
 * every line, the stderr summary included, within the width without a word broken.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryIO } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { wrapProse } from '../../src/cli/table-fit.js';
import { cleanEnv, makeHome, makeTempDir } from '../helpers/cli.js';

async function onTerminal(argv: string[]): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const home = makeHome();
  const env = cleanEnv(home);
  const io = createMemoryIO({ isTTY: true, columns: 80, env, noColor: true });
  const exitCode = await main(argv, { io, env, cwd: home });
  return { stdout: io.stdoutText(), stderr: io.stderrText(), exitCode };
}

describe('gates check at 80 columns', () => {
  it('puts the verdict and the blocking gate first and names the record types to add', async () => {
    const dataDir = makeTempDir('govctl-data-');
    const result = await onTerminal(['gates', 'check', '--base-url', 'local', '--data-dir', dataDir]);
    expect(result.exitCode).toBe(2);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('✗ blocked: 1 blocking gate failing, 4 non-blocking gates failing (exit 2)');
    const rows = lines.filter((line) => /HARD FAIL|soft fail|✓ pass/.test(line));
    expect(rows[0]).toContain('EU AI Act');
    expect(rows).toHaveLength(5);
    const text = result.stdout.replace(/\n {2}/g, ' ');
    expect(text).toMatch(/To pass the blocking gate, add: .*training_data_governance/);
    expect(text).toMatch(/For the other gates, also add: .*vendor_risk/);
    expect(result.stdout).not.toMatch(/EUAIA_|ISO42001_|SOC2_/);
    expect(lines.length + result.stderr.trimEnd().split('\n').length).toBeLessThanOrEqual(24);
    for (const line of [...lines, ...result.stderr.trimEnd().split('\n')]) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(result.stderr.split('\n').length).toBeGreaterThan(2); // the summary is wrapped, not one long line
  });

  it('shows the control ids with -v', async () => {
    const dataDir = makeTempDir('govctl-data-');
    const result = await onTerminal(['gates', 'check', '-v', '--base-url', 'local', '--data-dir', dataDir]);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toContain('EUAIA_ART9');
  });
});

describe('wrapping prose', () => {
  it('never breaks a word, continuing lines under an indent', () => {
    const text = 'govctl: stored rec_01a20b24-5cb7-7540-aa8d-40a1ed04ae24 (change_event), earning 3 controls:';
    const lines = wrapProse(text, 40, '  ');
    expect(lines.join(' ').replace(/ {3}/g, ' ')).toBe(text);
    for (const line of lines) for (const word of line.trim().split(' ')) expect(text.split(' ')).toContain(word);
  });
});
