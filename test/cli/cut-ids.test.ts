/**
 * Ids a user copies from a terminal table into another command: tables keep them whole at 80
 * columns (optional columns go first), and an id that was cut anyway, or is malformed, is a usage
 * error (64) that says so, never a "not found" that `ledger prove` would report as tampering (2).
 */
import { describe, expect, it } from 'vitest';
import { createMemoryIO } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { closedPort } from '../helpers/ports.js';
import { cleanEnv, makeHome, makeTempDir, runCli } from '../helpers/cli.js';

const CUT = 'rec_01…2df55';

describe('ids on the command line', () => {
  it('refuses a cut id given to `ledger prove` as a usage error that says it was cut', async () => {
    const port = await closedPort();
    const result = await runCli(['ledger', 'prove', CUT, '--base-url', `http://127.0.0.1:${port}`, '--api-key', 'gk_test', '--workspace', 'ws_1']);
    expect(result.exitCode).toBe(64);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('was cut');
    expect(result.stderr).toContain('--json');
    expect(result.stderr).not.toContain('log holds no entry');
  });

  it('refuses a malformed id with 64 naming the form it must have', async () => {
    const port = await closedPort();
    const result = await runCli(['ledger', 'prove', 'rec_nope', '--base-url', `http://127.0.0.1:${port}`, '--api-key', 'gk_test', '--workspace', 'ws_1']);
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toContain('rec_… or att_…');
  });

  it('refuses a cut --after for `evidence export` and a cut key id for `admin api-key revoke`', async () => {
    const exported = await runCli(['evidence', 'export', '--after', CUT, '--base-url', 'local', '--data-dir', makeTempDir()]);
    expect(exported.exitCode).toBe(64);
    expect(exported.stderr).toContain('was cut');
    const revoked = await runCli(['admin', 'api-key', 'revoke', 'key_01…2df55', '--db', `${makeTempDir()}/none.db`]);
    expect(revoked.exitCode).toBe(64);
    expect(revoked.stderr).toContain('was cut');
  });
});

describe('tables at 80 columns', () => {
  it('show record ids whole in `evidence list`, leaving optional columns out', async () => {
    const dataDir = makeTempDir('govctl-data-');
    const added = await runCli([
      'evidence',
      'add',
      'change_event',
      '--system',
      'consumer-loan-scorer-production-eu-west-1',
      '--type',
      'deployment',
      '--by',
      'ci@example.com',
      '--description',
      'release 1',
      '--environment',
      'production',
      '--base-url',
      'local',
      '--data-dir',
      dataDir,
      '--json',
    ]);
    expect(added.exitCode).toBe(0);
    const id = JSON.parse(added.stdout).record_id as string;
    const home = makeHome();
    const env = cleanEnv(home);
    const io = createMemoryIO({ isTTY: true, columns: 80, env, noColor: true });
    const exitCode = await main(['evidence', 'list', '--base-url', 'local', '--data-dir', dataDir], { io, env, cwd: home });
    expect(exitCode).toBe(0);
    const lines = io.stdoutText().trimEnd().split('\n');
    expect(lines.some((line) => line.includes(id))).toBe(true);
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(80);
    expect(lines[0]).not.toContain('SOURCE');
  });
});
