/**
 * The embedded store (docs/cli.md "The embedded store"): with nothing configured, commands run
 * against a service database in the data directory and say so once; with CI set they refuse; and
 * Ctrl-C ends a long command with 130 after reporting what was done.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanEnv, codeCacheEnv, ensureBuilt, makeHome, makeTempDir, runCli, runProcess } from '../helpers/cli.js';

beforeAll(async () => {
  await ensureBuilt();
});

const change = (n: number) =>
  JSON.stringify({
    record_type: 'change_event',
    system_name: 'local-system',
    payload: { type: 'deployment', by: 'ci@example.com', description: `release ${n}`, environment: 'production', system: 'local-system' },
  });

describe('the embedded store', () => {
  it('is used when nothing is configured, in $XDG_DATA_HOME/govctl, with one notice on stderr', async () => {
    const home = makeHome();
    // A process: the home directory shown as `~` is the process's (displayPath reads os.homedir()).
    const added = await runProcess(['evidence', 'import', '-'], { home, input: change(1) });
    expect(added.exitCode).toBe(0);
    expect(added.stderr.split('\n')[0]).toBe('govctl: using the local store in ~/data/govctl (no service configured; see `govctl config init`)');
    expect(added.stderr.match(/using the local store/g)).toHaveLength(1);
    expect(existsSync(join(home, 'data', 'govctl', 'govctl.db'))).toBe(true);

    const listed = await runCli(['evidence', 'list'], { home });
    expect(listed.exitCode).toBe(0);
    expect(listed.stdout).toMatch(/^rec_\S+\tchange_event\tlocal-system\t/);
  });

  it('lives in --data-dir (or GOVCTL_DATA_DIR), and --base-url local uses it without a notice', async () => {
    const dataDir = makeTempDir('govctl-data-');
    const first = await runCli(['whoami', '--data-dir', dataDir]);
    expect(first.exitCode).toBe(0);
    expect(first.stderr).toContain('using the local store in');
    const again = await runCli(['whoami', '--base-url', 'local'], { env: { GOVCTL_DATA_DIR: dataDir } });
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toBe('');
    expect(again.stdout).toBe(first.stdout);
  });

  it('is refused with 78 when CI is set and nothing is configured, unless asked for', async () => {
    const home = makeHome();
    const refused = await runCli(['evidence', 'list'], { home, env: { CI: 'true' } });
    expect(refused.exitCode).toBe(78);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('CI is set');
    expect(existsSync(join(home, 'data', 'govctl'))).toBe(false);
    const asked = await runCli(['evidence', 'list', '--base-url', 'local'], { home, env: { CI: 'true' } });
    expect(asked.exitCode).toBe(0);
  });

  it('adds a record from flags and lists it as JSON', async () => {
    const home = makeHome();
    const added = await runCli(
      [
        'evidence',
        'add',
        'vendor_risk',
        '--system',
        'local-vendor',
        '--vendor',
        'Acme AI',
        '--tier',
        'high',
        '--last-reviewed',
        '2026-01-15',
        '--contact',
        'a@acme.example',
        '--contact',
        'b@acme.example',
        '--json',
      ],
      { home },
    );
    expect(added.exitCode).toBe(0);
    const { record_id } = JSON.parse(added.stdout);
    const listed = JSON.parse((await runCli(['evidence', 'list', '--json'], { home })).stdout);
    expect(listed.records.map((r: { record_id: string }) => r.record_id)).toEqual([record_id]);
  });
});

describe('Ctrl-C', () => {
  it('stops an import, reports the records sent, and exits 130', async () => {
    const home = makeHome();
    const child = execa(process.execPath, [BIN, 'evidence', 'import', '-'], {
      cwd: home,
      env: cleanEnv(home, codeCacheEnv()),
      extendEnv: false,
      reject: false,
    });
    child.stdin.write(`${change(1)}\n${change(2)}\n`);
    let seen = '';
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.split('\n').length > 2) resolve();
      });
      // With 16 requests in flight, results appear once input pauses: keep stdin open, no more lines.
      setTimeout(resolve, 10_000);
    });
    child.kill('SIGINT');
    const result = await child;
    expect(result.exitCode).toBe(130);
    expect(String(result.stderr)).toMatch(/interrupted after 2 records \(0 failed\)\ngovctl: interrupted$/);
  });
});
