/**
 * The embedded store's files (docs/security.md "Terminal output and local files"): a data
 * directory that another user owns or that others may write to is refused with 78 and what to run;
 * the directory is created 0700 and its files 0600, and a symlink planted in place of the database
 * or the key file is refused, never followed.
 */
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { userInfo, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryIO } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';

const root = mkdtempSync(join(tmpdir(), 'govctl-store-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function run(args: string[], dataDir: string) {
  const io = createMemoryIO();
  const env = { XDG_CONFIG_HOME: join(root, 'config'), HOME: root, GOVCTL_DATA_DIR: dataDir };
  const exitCode = await main(args, { io, env, cwd: root });
  return { exitCode, stdout: io.stdoutText(), stderr: io.stderrText() };
}

/** The uid of `nobody`, when the machine has that user. */
function nobodyUid(): number | undefined {
  try {
    return Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  } catch {
    return undefined;
  }
}

const isRoot = userInfo().uid === 0;
const nobody = nobodyUid();

describe('the data directory of the local store', () => {
  it('is created with mode 0700, its database and key file 0600', async () => {
    const dataDir = join(root, 'fresh', 'govctl');
    const result = await run(['whoami', '--json'], dataDir);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dataDir, 'govctl.db')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'local.json')).mode & 0o777).toBe(0o600);
  });

  it('is refused when others may write to it (0777): 78 saying chmod 700', async () => {
    const dataDir = join(root, 'shared');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o777);
    const result = await run(['whoami'], dataDir);
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain(`the data directory ${dataDir} is writable by other users (mode 777)`);
    expect(result.stderr).toContain(`chmod 700 ${dataDir}`);
    expect(existsSync(join(dataDir, 'govctl.db'))).toBe(false);
  });

  it('is a configuration error (78), not a crash (70), when a file stands where it should be (the store and serve)', async () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'not a directory');
    for (const dataDir of [file, join(file, 'below')]) {
      for (const args of [['whoami'], ['serve', '--port', '0']]) {
        const result = await run(args, dataDir);
        expect(result.exitCode, result.stderr).toBe(78);
        expect(result.stderr).toContain(`the data directory ${dataDir} cannot be made`);
        expect(result.stderr).not.toContain('internal error');
      }
    }
  });

  it('is refused when its group may write to it (0770)', async () => {
    const dataDir = join(root, 'group');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o770);
    const result = await run(['whoami'], dataDir);
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain('writable by its group');
  });

  it.skipIf(!isRoot || nobody === undefined)('is refused when another user owns it: 78 saying chown', async () => {
    const dataDir = join(root, 'theirs');
    mkdirSync(dataDir, { mode: 0o700 });
    chownSync(dataDir, nobody!, nobody!);
    const result = await run(['whoami'], dataDir);
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain(`belongs to another user (uid ${nobody})`);
    expect(result.stderr).toContain(`chown ${userInfo().uid} ${dataDir}`);
    expect(existsSync(join(dataDir, 'govctl.db'))).toBe(false);
  });

  it('refuses a symlink planted as the database, and never writes through it', async () => {
    const dataDir = join(root, 'planted');
    mkdirSync(dataDir, { mode: 0o700 });
    const target = join(root, 'victim.db');
    symlinkSync(target, join(dataDir, 'govctl.db'));
    const result = await run(['whoami'], dataDir);
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain('is not a regular file');
    expect(existsSync(target)).toBe(false);
  });

  it('refuses a symlink planted as the key file, and never reads through it', async () => {
    const dataDir = join(root, 'planted-key');
    mkdirSync(dataDir, { mode: 0o700 });
    const target = join(root, 'elsewhere.json');
    writeFileSync(target, '{}');
    symlinkSync(target, join(dataDir, 'local.json'));
    const result = await run(['whoami'], dataDir);
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain('local.json is a symlink');
    expect(lstatSync(join(dataDir, 'local.json')).isSymbolicLink()).toBe(true);
  });
});
