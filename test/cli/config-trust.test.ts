/**
 * A repository's config is untrusted input (docs/security.md): a JavaScript config found by
 * searching never runs; the user's API key never goes to a host that only a project config names,
 * until the user pins it; a project config names key files only inside the project; unknown keys
 * draw a did-you-mean warning. In-process runs against counting HTTP servers on 127.0.0.1.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryIO } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { serviceLikeHandler, startFaultServer, type FaultServer } from '../helpers/fault-server.js';

const API_KEY = 'gk_UserUserUserUserUserUserUserUser1234';
const PROJECT_KEY = 'gk_ProjectProjectProjectProjectProj99zz';

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A fresh home: user config and data directories, and a repository with a subdirectory. */
function home() {
  const root = mkdtempSync(join(tmpdir(), 'govctl-trust-'));
  roots.push(root);
  const repo = join(root, 'repo');
  mkdirSync(join(repo, 'sub', 'deep'), { recursive: true });
  mkdirSync(join(root, 'config', 'govctl'), { recursive: true });
  return {
    root,
    repo,
    userFile: join(root, 'config', 'govctl', 'config.json'),
    env: { XDG_CONFIG_HOME: join(root, 'config'), XDG_DATA_HOME: join(root, 'data'), HOME: root } as Record<string, string>,
  };
}

async function run(args: string[], options: { env: Record<string, string>; cwd: string }) {
  const io = createMemoryIO();
  const exitCode = await main(args, { io, env: options.env, cwd: options.cwd });
  return { exitCode, stdout: io.stdoutText(), stderr: io.stderrText() };
}

let good: FaultServer;
let other: FaultServer;
beforeEach(async () => {
  good = await startFaultServer({ handler: serviceLikeHandler({ workspaceId: 'ws_good' }) });
  other = await startFaultServer({ handler: serviceLikeHandler({ workspaceId: 'ws_other' }) });
});
afterEach(async () => {
  await good.close();
  await other.close();
});

describe('a JavaScript config found by searching', () => {
  for (const place of ['govctl.config.js', '.govctlrc.cjs', '.config/govctlrc.js']) {
    it(`is never run (${place}), and the warning says how to load it on purpose`, async () => {
      const h = home();
      const marker = join(h.root, 'pwned');
      mkdirSync(join(h.repo, '.config'), { recursive: true });
      writeFileSync(
        join(h.repo, place),
        `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran'); module.exports = { baseUrl: ${JSON.stringify(other.url)} };`,
      );
      const result = await run(['config', 'show', '--json'], {
        env: { ...h.env, SERVICE_BASE_URL: good.url, SERVICE_API_KEY: API_KEY },
        cwd: join(h.repo, 'sub'),
      });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(existsSync(marker)).toBe(false);
      expect(result.stderr).toContain(`ignored ${join(h.repo, place)}`);
      expect(result.stderr).toContain(`--config ${join(h.repo, place)}`);
      expect(JSON.parse(result.stdout).files.project).toBeNull();
    });
  }

  it('does not hide a data config beside it, and runs only when named with --config', async () => {
    const h = home();
    const marker = join(h.root, 'ran');
    writeFileSync(
      join(h.repo, 'govctl.config.js'),
      `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran'); module.exports = { systemName: 'from-js' };`,
    );
    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ systemName: 'from-json' }));
    const searched = await run(['config', 'show', '--json'], { env: h.env, cwd: h.repo });
    expect(JSON.parse(searched.stdout).settings.systemName.value).toBe('from-json');
    expect(existsSync(marker)).toBe(false);

    const named = await run(['--config', 'govctl.config.js', 'config', 'show', '--json'], { env: h.env, cwd: h.repo });
    expect(named.exitCode, named.stderr).toBe(0);
    expect(existsSync(marker)).toBe(true);
    const report = JSON.parse(named.stdout);
    expect(report.settings.systemName).toMatchObject({ value: 'from-js', source: 'explicit' });
    expect(report.files.explicit).toBe(join(h.repo, 'govctl.config.js'));
  });
});

describe("the user's API key and a project config's host", () => {
  it('is not sent to a host that only a .govctlrc.json in a parent directory names: 78, naming both hosts', async () => {
    const h = home();
    writeFileSync(h.userFile, JSON.stringify({ baseUrl: good.url }));
    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ baseUrl: other.url, systemName: 'loan-scorer' }));
    const result = await run(['whoami'], { env: { ...h.env, SERVICE_API_KEY: API_KEY }, cwd: join(h.repo, 'sub', 'deep') });
    expect(result.exitCode).toBe(78);
    expect(other.count).toBe(0);
    expect(good.count).toBe(0);
    expect(result.stderr).toContain(other.url);
    expect(result.stderr).toContain(good.url);
    expect(result.stderr).toContain('SERVICE_API_KEY');
    expect(result.stderr).toContain(`govctl config trust-host ${other.url}`);
    expect(result.stderr).toContain(`GOVCTL_TRUSTED_HOSTS=${other.url}`);
    expect(result.stderr).not.toContain(API_KEY);
  });

  it('is refused with a message that names the project host itself, in text and in --json (a URL followed by a comma stays a URL)', async () => {
    const h = home();
    writeFileSync(h.userFile, JSON.stringify({ baseUrl: good.url }));
    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ baseUrl: other.url }));
    const text = await run(['whoami'], { env: { ...h.env, SERVICE_API_KEY: API_KEY }, cwd: h.repo });
    expect(text.exitCode).toBe(78);
    expect(text.stderr).toContain(`points to ${other.url}, and the API key`);
    expect(text.stderr).not.toContain('(not a URL)');
    const json = await run(['whoami', '--json'], { env: { ...h.env, SERVICE_API_KEY: API_KEY }, cwd: h.repo });
    expect(json.exitCode).toBe(78);
    expect(json.stdout).toBe('');
    const message = JSON.parse(json.stderr.trim()).message as string;
    expect(message).toContain(other.url);
    expect(message).toContain(good.url);
    expect(other.count + good.count).toBe(0);
  });

  it('is refused for a key from --api-key-file and from the user config too', async () => {
    const h = home();
    const keyFile = join(h.root, 'api-key');
    writeFileSync(keyFile, API_KEY, { mode: 0o600 });
    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ baseUrl: other.url }));
    const fromFlag = await run(['--api-key-file', keyFile, 'whoami'], { env: h.env, cwd: h.repo });
    expect(fromFlag.exitCode).toBe(78);
    writeFileSync(h.userFile, JSON.stringify({ apiKeyFile: keyFile }));
    const fromUser = await run(['whoami'], { env: h.env, cwd: h.repo });
    expect(fromUser.exitCode).toBe(78);
    expect(fromUser.stderr).toContain('(apiKeyFile');
    expect(other.count).toBe(0);
  });

  it('goes to the project host once the pipeline pins it (GOVCTL_TRUSTED_HOSTS): the CI layout', async () => {
    const h = home();
    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ baseUrl: other.url, systemName: 'loan-scorer' }));
    const result = await run(['whoami', '--json'], {
      env: { ...h.env, SERVICE_API_KEY: API_KEY, GOVCTL_TRUSTED_HOSTS: `https://elsewhere.example, ${other.url}/` },
      cwd: join(h.repo, 'sub'),
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).workspace_id).toBe('ws_other');
    expect(other.requests[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('a pin that is not an http(s) URL is 78, shown as typed (a pin with a password is not shown whole)', async () => {
    const h = home();
    const result = await run(['whoami', '--json'], {
      env: { ...h.env, SERVICE_API_KEY: API_KEY, SERVICE_BASE_URL: good.url, GOVCTL_TRUSTED_HOSTS: '127.0.0.1:45413' },
      cwd: h.repo,
    });
    expect(result.exitCode).toBe(78);
    expect(JSON.parse(result.stderr).message).toBe('GOVCTL_TRUSTED_HOSTS holds "127.0.0.1:45413", which is not an http(s) URL');
    const secret = await run(['whoami', '--json'], {
      env: { ...h.env, SERVICE_API_KEY: API_KEY, SERVICE_BASE_URL: good.url, GOVCTL_TRUSTED_HOSTS: 'ftp://me:s3cret@files.example' },
      cwd: h.repo,
    });
    expect(secret.exitCode).toBe(78);
    expect(secret.stderr).not.toContain('s3cret');
  });

  it('goes to the project host once the user pins it with `govctl config trust-host`, and not after --remove', async () => {
    const h = home();
    writeFileSync(h.userFile, JSON.stringify({ systemName: 'kept' }));
    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ baseUrl: other.url }));
    const env = { ...h.env, SERVICE_API_KEY: API_KEY };
    const pinned = await run(['config', 'trust-host', `${other.url}/some/path?x=1`], { env, cwd: h.repo });
    expect(pinned.exitCode, pinned.stderr).toBe(0);
    expect(pinned.stdout).toBe(`${other.url}\n`);
    expect(JSON.parse(readFileSync(h.userFile, 'utf8'))).toEqual({ systemName: 'kept', trustedHosts: [other.url] });
    expect(statSync(h.userFile).mode & 0o777).toBe(0o600);

    const works = await run(['whoami', '--json'], { env, cwd: h.repo });
    expect(works.exitCode, works.stderr).toBe(0);
    expect(other.count).toBe(1);

    // A pin in the project config itself counts for nothing.
    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ baseUrl: other.url, trustedHosts: [other.url] }));
    expect((await run(['config', 'trust-host', '--remove', other.url], { env, cwd: h.repo })).exitCode).toBe(0);
    expect(JSON.parse(readFileSync(h.userFile, 'utf8'))).toEqual({ systemName: 'kept' });
    const refused = await run(['whoami'], { env, cwd: h.repo });
    expect(refused.exitCode).toBe(78);
    expect(refused.stderr).toContain('only your user config or GOVCTL_TRUSTED_HOSTS can pin hosts');
    expect(other.count).toBe(1);
  });

  it("lets the project's own key (inside the project) go to the project's host, and the user's key to a host the user named", async () => {
    const h = home();
    writeFileSync(join(h.repo, 'api-key'), PROJECT_KEY, { mode: 0o600 });
    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ baseUrl: other.url, apiKeyFile: 'api-key' }));
    const own = await run(['whoami', '--json'], { env: h.env, cwd: h.repo });
    expect(own.exitCode, own.stderr).toBe(0);
    expect(other.requests[0].headers.authorization).toBe(`Bearer ${PROJECT_KEY}`);

    const named = await run(['whoami', '--json'], { env: { ...h.env, SERVICE_API_KEY: API_KEY, SERVICE_BASE_URL: good.url }, cwd: h.repo });
    expect(named.exitCode, named.stderr).toBe(0);
    expect(good.requests[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(other.count).toBe(1);
  });

  it('needs no pin when the user config names the same host', async () => {
    const h = home();
    writeFileSync(h.userFile, JSON.stringify({ baseUrl: `${other.url}/` }));
    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ baseUrl: other.url, systemName: 'loan-scorer' }));
    const result = await run(['whoami', '--json'], { env: { ...h.env, SERVICE_API_KEY: API_KEY }, cwd: h.repo });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(other.count).toBe(1);
  });

  it('needs no pin for the embedded store', async () => {
    const h = home();
    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ baseUrl: 'local' }));
    const result = await run(['whoami', '--json'], { env: h.env, cwd: h.repo });
    expect(result.exitCode, result.stderr).toBe(0);
  });
});

describe("a project config's choice of the embedded store", () => {
  /** A repository that ships a store in .gov and points its config at it, as a pull request could. */
  function repoWithStore() {
    const h = home();
    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ baseUrl: 'local', dataDir: '.gov' }));
    return h;
  }

  it('is refused (78) while the user has an API key for a service, so a pull request cannot make the gate read its own store', async () => {
    const h = repoWithStore();
    const env = { ...h.env, CI: 'true', SERVICE_API_KEY: API_KEY, GOVCTL_TRUSTED_HOSTS: good.url };
    const result = await run(['gates', 'check'], { env, cwd: h.repo });
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain('chooses the local store (baseUrl: local) while the API key from SERVICE_API_KEY is set for a service');
    expect(result.stderr).toContain('--base-url local');
    expect(result.stderr).not.toContain(API_KEY);
    expect(existsSync(join(h.repo, '.gov'))).toBe(false);
  });

  it('is refused for a key from the user config too', async () => {
    const h = repoWithStore();
    const keyFile = join(h.root, 'key');
    writeFileSync(keyFile, API_KEY, { mode: 0o600 });
    writeFileSync(h.userFile, JSON.stringify({ baseUrl: good.url, apiKeyFile: keyFile }));
    const result = await run(['posture', '--json'], { env: h.env, cwd: h.repo });
    expect(result.exitCode).toBe(78);
    expect(good.count).toBe(0);
  });

  it('is taken when the user asks for the local store, or when no key of the user is set', async () => {
    const h = repoWithStore();
    const asked = await run(['whoami', '--json', '--base-url', 'local'], { env: { ...h.env, SERVICE_API_KEY: API_KEY }, cwd: h.repo });
    expect(asked.exitCode, asked.stderr).toBe(0);
    const keyless = await run(['whoami', '--json'], { env: h.env, cwd: h.repo });
    expect(keyless.exitCode, keyless.stderr).toBe(0);
  });
});

describe('key files named by a project config', () => {
  it('are refused outside the project root (../../secret), without reading them', async () => {
    const h = home();
    const secret = join(h.root, 'secret');
    writeFileSync(secret, 'gk_StolenStolenStolenStolenStolen0000', { mode: 0o600 });
    writeFileSync(join(h.repo, 'sub', '.govctlrc.json'), JSON.stringify({ baseUrl: other.url, apiKeyFile: '../../secret' }));
    const result = await run(['whoami'], { env: h.env, cwd: join(h.repo, 'sub') });
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain('apiKeyFile in the project config');
    expect(result.stderr).toContain('outside the project');
    expect(result.stderr).not.toContain('Stolen');
    expect(other.count).toBe(0);
  });

  it('are refused through a symlink that leads out of the project, for the signing key too', async () => {
    const h = home();
    const secret = join(h.root, 'git-credentials');
    writeFileSync(secret, 'ab'.repeat(32), { mode: 0o600 });
    symlinkSync(secret, join(h.repo, 'innocent-key'));
    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ baseUrl: other.url, apiKeyFile: 'innocent-key' }));
    const api = await run(['whoami'], { env: h.env, cwd: h.repo });
    expect(api.exitCode).toBe(78);
    expect(api.stderr).toContain(secret);
    expect(other.count).toBe(0);

    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ signingKeyFile: 'innocent-key' }));
    const signing = await run(['config', 'show', '--json'], { env: h.env, cwd: h.repo });
    expect(signing.exitCode).toBe(78);
    expect(signing.stderr).toContain('signingKeyFile in the project config');
  });

  it('include the data directory: a project config cannot aim the local store outside the project', async () => {
    const h = home();
    const outside = join(h.root, 'elsewhere');
    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ baseUrl: 'local', dataDir: '../elsewhere' }));
    const result = await run(['whoami'], { env: h.env, cwd: h.repo });
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain('dataDir in the project config');
    expect(existsSync(outside)).toBe(false);

    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ baseUrl: 'local', dataDir: '.govctl-data' }));
    const inside = await run(['whoami', '--json'], { env: h.env, cwd: h.repo });
    expect(inside.exitCode, inside.stderr).toBe(0);
    expect(existsSync(join(h.repo, '.govctl-data', 'govctl.db'))).toBe(true);
  });

  it('may be anywhere when the user names them (user config)', async () => {
    const h = home();
    const keyFile = join(h.root, 'api-key');
    writeFileSync(keyFile, API_KEY, { mode: 0o600 });
    writeFileSync(h.userFile, JSON.stringify({ baseUrl: good.url, apiKeyFile: keyFile }));
    const result = await run(['whoami', '--json'], { env: h.env, cwd: h.repo });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(good.count).toBe(1);
  });
});

describe('unknown config keys', () => {
  it('draw a warning with a did-you-mean suggestion', async () => {
    const h = home();
    writeFileSync(join(h.repo, '.govctlrc.json'), JSON.stringify({ baseURL: 'local', sytemName: 'x', zzzzzzzzzz: 1 }));
    const result = await run(['config', 'show', '--json'], { env: h.env, cwd: h.repo });
    expect(result.exitCode, result.stderr).toBe(0);
    // With --json, stderr is JSON only: each warning is a {"warning": text} line.
    const warnings = result.stderr
      .trim()
      .split('\n')
      .map((line) => `${(JSON.parse(line) as { warning: string }).warning}\n`)
      .join('');
    expect(warnings).toContain(`unknown setting "baseURL" in ${join(h.repo, '.govctlrc.json')} (ignored); did you mean "baseUrl"?`);
    expect(warnings).toContain('unknown setting "sytemName"');
    expect(warnings).toContain('did you mean "systemName"?');
    expect(warnings).toMatch(/unknown setting "zzzzzzzzzz" in [^\n]* \(ignored\)\n/);
  });
});
