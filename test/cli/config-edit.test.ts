/**
 * `config init` writes only what was given, and `config get|set|unset` edit the user config: keys
 * and values checked as the settings check them, secrets never taken from the command line and
 * never printed.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeHome, runCli } from '../helpers/cli.js';

const API_KEY = 'gk_SecretSecretSecretSecretSecret1234ab12';
const userFile = (home: string) => join(home, 'config', 'govctl', 'config.json');

describe('config init --project', () => {
  it('writes only the settings given, so the user config still decides the rest', async () => {
    const home = makeHome();
    expect((await runCli(['config', 'set', 'onError', 'warn'], { home })).exitCode).toBe(0);
    const init = await runCli(['config', 'init', '--project', '--system', 'loan-scorer'], { home });
    expect(init.exitCode, init.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(home, '.govctlrc.json'), 'utf8'))).toEqual({ systemName: 'loan-scorer' });
    const shown = JSON.parse((await runCli(['config', 'show', '--json'], { home })).stdout).settings;
    expect(shown.onError).toMatchObject({ value: 'warn', source: 'user' });
    expect(shown.systemName).toMatchObject({ value: 'loan-scorer', source: 'project' });
  });
});

describe('config get, set, unset', () => {
  it('set writes the user config (0600), get reads it back, unset removes the key', async () => {
    const home = makeHome();
    const set = await runCli(['config', 'set', 'baseUrl', 'https://governance.example.com'], { home });
    expect(set.exitCode, set.stderr).toBe(0);
    expect(statSync(userFile(home)).mode & 0o777).toBe(0o600);
    expect((await runCli(['config', 'get', 'baseUrl'], { home })).stdout).toBe('https://governance.example.com\n');
    expect((await runCli(['config', 'set', 'apiKeyFile', 'key.txt'], { home })).exitCode).toBe(0);
    expect(JSON.parse(readFileSync(userFile(home), 'utf8'))).toEqual({ baseUrl: 'https://governance.example.com', apiKeyFile: join(home, 'key.txt') });
    const unset = await runCli(['config', 'unset', 'baseUrl', '--json'], { home });
    expect(JSON.parse(unset.stdout)).toEqual({ path: userFile(home), key: 'baseUrl', changed: true });
    const unsetGet = await runCli(['config', 'get', 'baseUrl', '--json'], { home });
    expect(JSON.parse(unsetGet.stdout)).toEqual({ path: userFile(home), key: 'baseUrl', value: null });
  });

  it('checks keys (with a suggestion) and values as the settings do (64, nothing written)', async () => {
    const home = makeHome();
    const key = await runCli(['config', 'set', 'baseURL', 'https://x.example'], { home });
    expect(key.exitCode).toBe(64);
    expect(key.stderr).toMatch(/unknown config key "baseURL"; did you mean "baseUrl"\?/);
    for (const [name, value] of [
      ['onError', 'sometimes'],
      ['baseUrl', 'ftp://x.example'],
      ['baseUrl', 'https://user:pw@x.example'],
      ['timeout', 'soon'],
      ['trustedHosts', 'https://x.example'],
      ['ledgerKey', 'garbage'],
    ]) {
      const result = await runCli(['config', 'set', name, value], { home });
      expect(result.exitCode, `${name} ${value}`).toBe(64);
      expect(result.stderr).not.toContain('pw@');
    }
    expect(existsSync(userFile(home))).toBe(false);
  });

  it('stores a well-formed log verifier key, as admin init prints it', async () => {
    const home = makeHome();
    const key = 'govctl.local/ledger/ws_01a20d50-8390-7198-b608-d9251098d51f+e6392558+AbHju3zlf/mY+u88XcwAhKt5h3nx/W+kIEzS1xhLH3Bq';
    const result = await runCli(['config', 'set', 'ledgerKey', key], { home });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(readFileSync(userFile(home), 'utf8'))).toEqual({ ledgerKey: key });
  });

  it('refuses to set a secret from the command line, pointing at a key file or the environment', async () => {
    const home = makeHome();
    for (const key of ['apiKey', 'signingKey']) {
      const result = await runCli(['config', 'set', key, key === 'apiKey' ? API_KEY : '11'.repeat(32)], { home });
      expect(result.exitCode).toBe(64);
      expect(result.stderr).not.toContain(API_KEY);
      expect(result.stderr).not.toContain('11'.repeat(32));
      expect(result.stderr).toMatch(key === 'apiKey' ? /config set apiKeyFile FILE.*GOVCTL_API_KEY/ : /config set signingKeyFile FILE.*GOVCTL_SIGNING_KEY/);
    }
    expect(existsSync(userFile(home))).toBe(false);
  });

  it('get shows a secret in the user config masked, never its value', async () => {
    const home = makeHome();
    mkdirSync(join(home, 'config', 'govctl'), { recursive: true });
    writeFileSync(userFile(home), JSON.stringify({ apiKey: API_KEY, signingKey: '22'.repeat(32) }), { mode: 0o600 });
    const apiKey = await runCli(['config', 'get', 'apiKey'], { home });
    expect(apiKey.stdout).toBe('gk_…ab12\n');
    const signingKey = await runCli(['config', 'get', 'signingKey', '--json'], { home });
    expect(signingKey.stdout).not.toContain('2222');
    expect(JSON.parse(signingKey.stdout).value).toMatch(/^set \(hidden/);
  });

  it('get apiKey, with the key in a file (the only way set allows), says which key names the file', async () => {
    const home = makeHome();
    const keyFile = join(home, 'api-key');
    writeFileSync(keyFile, API_KEY, { mode: 0o600 });
    expect((await runCli(['config', 'set', 'apiKeyFile', keyFile], { home })).exitCode).toBe(0);
    const apiKey = await runCli(['config', 'get', 'apiKey'], { home });
    expect(apiKey.exitCode).toBe(0);
    expect(apiKey.stdout).toBe('');
    expect(apiKey.stderr).toContain('apiKey is not set in');
    expect(apiKey.stderr).toContain('apiKeyFile names the file it is read from (`govctl config get apiKeyFile`)');
    expect(apiKey.stderr).not.toContain(API_KEY);
    expect((await runCli(['config', 'get', 'apiKeyFile'], { home })).stdout).toBe(`${keyFile}\n`);
  });
});
