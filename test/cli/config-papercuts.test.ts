/**
 * Configuration papercuts: a base URL that is not a URL is named (64 on the command line, 78 from
 * the environment), a config file with a byte-order mark loads, and `config init` after
 * `config set` says how to go on.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { userConfigPath } from '../../src/cli/settings.js';
import { cleanEnv, makeHome, runCli } from '../helpers/cli.js';

describe('configuration papercuts', () => {
  it('names a base URL without a scheme: 64 as a flag, 78 from the environment', async () => {
    const flag = await runCli(['whoami', '--base-url', '127.0.0.1:8080'], { env: { SERVICE_API_KEY: 'gk_test_key_12345' } });
    expect(flag.exitCode).toBe(64);
    expect(flag.stderr).toContain('"127.0.0.1:8080"');
    expect(flag.stderr).toContain('did you mean http://127.0.0.1:8080');
    const env = await runCli(['whoami'], { env: { SERVICE_BASE_URL: '127.0.0.1:8080', SERVICE_API_KEY: 'gk_test_key_12345' } });
    expect(env.exitCode).toBe(78);
    expect(env.stderr).toContain('"127.0.0.1:8080" from SERVICE_BASE_URL');
  });

  it('loads a user config file that starts with a byte-order mark', async () => {
    const home = makeHome();
    expect((await runCli(['config', 'set', 'systemName', 'bom-system'], { home })).exitCode).toBe(0);
    const path = userConfigPath(cleanEnv(home));
    writeFileSync(path, `\ufeff${readFileSync(path, 'utf8')}`);
    const shown = await runCli(['config', 'show', '--json'], { home });
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('bom-system');
  });

  it('says how to go on when `config init` finds the file `config set` wrote', async () => {
    const home = makeHome();
    expect((await runCli(['config', 'set', 'systemName', 'first'], { home })).exitCode).toBe(0);
    const init = await runCli(['config', 'init', '--base-url', 'https://governance.example.com'], { home });
    expect(init.exitCode).toBe(64);
    expect(init.stderr).toContain('govctl config set KEY VALUE');
    expect(init.stderr).toContain('--force');
  });
});
