/**
 * `govctl config show` and `govctl config init` end to end: every setting's source (flag,
 * environment, project file, user file, default), secrets masked, and starter files written with
 * mode 0600, never over an existing one without --force, never holding a key.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/cli-fixtures.js';

const temp = tempDir();
afterAll(() => temp.remove());

const API_KEY = 'gk_SecretSecretSecretSecretSecret1234ab12';
const OTHER_KEY = 'gk_ProjectProjectProjectProjectProj99zz';

/** A fresh home: XDG config and data directories, and a project directory. */
function home(name: string) {
  const root = join(temp.dir, name);
  const config = join(root, 'config');
  const project = join(root, 'project');
  mkdirSync(join(config, 'govctl'), { recursive: true });
  mkdirSync(join(project, 'sub'), { recursive: true });
  return { root, config, project, userFile: join(config, 'govctl', 'config.json'), env: { XDG_CONFIG_HOME: config, XDG_DATA_HOME: join(root, 'data') } };
}

interface Shown {
  value: string | null;
  source: string;
  origin: string;
}

async function show(args: string[], env: Record<string, string>, cwd: string): Promise<Record<string, Shown>> {
  const result = await runCli(['config', 'show', '--json', ...args], { env, cwd });
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout).settings;
}

describe('govctl config show', () => {
  it('names where each setting came from: flag, env, project file, user file, default', async () => {
    const h = home('sources');
    writeFileSync(h.userFile, JSON.stringify({ systemName: 'from-user', agentName: 'agent-user', workspaceId: 'ws_user' }), { mode: 0o600 });
    writeFileSync(join(h.project, '.govctlrc.json'), JSON.stringify({ systemName: 'from-project', workspaceId: 'ws_project' }));
    const settings = await show(
      ['--workspace', 'ws_flag'],
      { ...h.env, SERVICE_BASE_URL: 'https://governance.example.com', SERVICE_API_KEY: API_KEY },
      join(h.project, 'sub'),
    );
    expect(settings.workspaceId).toEqual({ value: 'ws_flag', source: 'flag', origin: '--workspace' });
    expect(settings.baseUrl).toEqual({ value: 'https://governance.example.com', source: 'env', origin: 'SERVICE_BASE_URL' });
    expect(settings.systemName.value).toBe('from-project');
    expect(settings.systemName.source).toBe('project');
    expect(settings.systemName.origin).toContain(join(h.project, '.govctlrc.json'));
    expect(settings.agentName.value).toBe('agent-user');
    expect(settings.agentName.source).toBe('user');
    expect(settings.agentName.origin).toContain(h.userFile);
    expect(settings.onError).toMatchObject({ value: 'raise', source: 'default' });
    expect(settings.dataDir).toMatchObject({ value: join(h.root, 'data', 'govctl'), source: 'default' });
    expect(settings.apiKey.source).toBe('env');
  });

  it('masks the API key (gk_…last four) and never prints it, nor the signing key', async () => {
    const h = home('masking');
    const signingKey = 'ab'.repeat(32);
    const env = { ...h.env, SERVICE_BASE_URL: 'https://governance.example.com', SERVICE_API_KEY: API_KEY, SERVICE_SIGNING_KEY: signingKey };
    const json = await runCli(['config', 'show', '--json'], { env, cwd: h.project });
    const text = await runCli(['config', 'show'], { env, cwd: h.project });
    for (const result of [json, text]) {
      expect(result.exitCode).toBe(0);
      expect(result.stdout + result.stderr).not.toContain(API_KEY);
      expect(result.stdout + result.stderr).not.toContain(API_KEY.slice(3, 20));
      expect(result.stdout + result.stderr).not.toContain(signingKey);
    }
    const settings = JSON.parse(json.stdout).settings;
    expect(settings.apiKey.value).toBe('gk_…ab12');
    expect(settings.signingKey.value).toMatch(/^set \(public key [0-9a-f]{8}…[0-9a-f]{8}\)$/);
    expect(settings.signingKey.source).toBe('env');
    expect(text.stdout).toMatch(/^apiKey\tgk_…ab12\tenv\tSERVICE_API_KEY$/m);
    expect(JSON.parse(json.stdout).connection).toEqual({ kind: 'remote', base_url: 'https://governance.example.com' });
  });

  it('takes the API key from a key file named in the project config, and still masks it', async () => {
    const h = home('keyfile');
    // Inside the project: a project config may name key files only there (docs/security.md).
    const keyFile = join(h.project, 'api-key');
    writeFileSync(keyFile, `${OTHER_KEY}\n`, { mode: 0o600 });
    writeFileSync(join(h.project, '.govctlrc.json'), JSON.stringify({ baseUrl: 'https://gov.example.org', apiKeyFile: keyFile }));
    const result = await runCli(['config', 'show', '--json'], { env: h.env, cwd: h.project });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).not.toContain(OTHER_KEY);
    const settings = JSON.parse(result.stdout).settings;
    expect(settings.apiKey).toMatchObject({ value: 'gk_…99zz', source: 'project' });
    expect(settings.baseUrl).toMatchObject({ value: 'https://gov.example.org', source: 'project' });
  });

  it('shows the local store as the default when nothing is configured, and says CI would refuse it', async () => {
    const h = home('defaults');
    const local = JSON.parse((await runCli(['config', 'show', '--json'], { env: h.env, cwd: h.project })).stdout);
    expect(local.settings.baseUrl).toMatchObject({ value: 'local', source: 'default' });
    expect(local.connection).toEqual({ kind: 'local', data_dir: join(h.root, 'data', 'govctl') });
    expect(local.files).toEqual({ project: null, user: h.userFile, user_exists: false, explicit: null });
    const ci = JSON.parse((await runCli(['config', 'show', '--json'], { env: { ...h.env, CI: 'true' }, cwd: h.project })).stdout);
    expect(ci.settings.baseUrl.value).toBeNull();
    expect(ci.connection.kind).toBe('error');
  });
});

describe('govctl config init', () => {
  it('writes the user config with mode 0600, from the flags given, with a key file path and never a key', async () => {
    const h = home('init-user');
    const keyFile = join(h.root, 'api-key');
    writeFileSync(keyFile, API_KEY, { mode: 0o600 });
    const result = await runCli(['config', 'init', '--base-url', 'https://governance.example.com', '--api-key-file', keyFile, '--system', 'loan-scorer'], {
      env: { ...h.env, SERVICE_API_KEY: 'gk_FromTheEnvironmentFromTheEnvironment00' },
      cwd: h.project,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(h.userFile);
    expect(statSync(h.userFile).mode & 0o777).toBe(0o600);
    const text = readFileSync(h.userFile, 'utf8');
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain('FromTheEnvironment');
    // Only what was given: no defaults or nulls written as if chosen.
    expect(JSON.parse(text)).toEqual({
      baseUrl: 'https://governance.example.com',
      apiKeyFile: keyFile,
      systemName: 'loan-scorer',
    });
    // The written file is a working config: show reads it back.
    const settings = await show([], h.env, h.project);
    expect(settings.baseUrl).toMatchObject({ value: 'https://governance.example.com', source: 'user' });
    expect(settings.apiKey).toMatchObject({ value: 'gk_…ab12', source: 'user' });
  });

  it('never overwrites without --force, and replaces with it (still 0600)', async () => {
    const h = home('init-force');
    writeFileSync(h.userFile, '{"systemName": "keep-me"}\n', { mode: 0o644 });
    const refused = await runCli(['config', 'init', '--system', 'new'], { env: h.env, cwd: h.project });
    expect(refused.exitCode).toBe(64);
    expect(refused.stderr).toMatch(/already exists/);
    expect(readFileSync(h.userFile, 'utf8')).toBe('{"systemName": "keep-me"}\n');
    const forced = await runCli(['config', 'init', '--system', 'new', '--force', '--json'], { env: h.env, cwd: h.project });
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({ path: h.userFile, scope: 'user', replaced: true, config: { systemName: 'new' } });
    expect(JSON.parse(readFileSync(h.userFile, 'utf8')).systemName).toBe('new');
    expect(statSync(h.userFile).mode & 0o777).toBe(0o600);
  });

  it('writes ./.govctlrc.json with --project, and refuses a key from stdin', async () => {
    const h = home('init-project');
    const result = await runCli(['config', 'init', '--project', '--workspace', 'ws_project'], { env: h.env, cwd: h.project });
    expect(result.exitCode, result.stderr).toBe(0);
    const file = join(h.project, '.govctlrc.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).workspaceId).toBe('ws_project');
    const settings = await show([], h.env, join(h.project, 'sub'));
    expect(settings.workspaceId).toMatchObject({ value: 'ws_project', source: 'project' });
    const stdin = await runCli(['config', 'init', '--project', '--force', '--api-key-file', '-'], { env: h.env, cwd: h.project, input: API_KEY });
    expect(stdin.exitCode).toBe(64);
    expect(readFileSync(file, 'utf8')).not.toContain(API_KEY);
  });
});
