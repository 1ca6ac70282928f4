/**
 * `gates check` in a CI format when no verdict is reached (nothing listens, the key is refused,
 * nothing is configured): the annotation, job-summary row and JUnit errored test case CI reads,
 * with the run's own exit code; and a write that fails under `--on-error warn` in GitHub Actions
 * is a `::warning` annotation.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findAll, parseXml } from '../helpers/cli-fixtures.js';
import { makeTempDir, runCli } from '../helpers/cli.js';
import { startFaultServer } from '../helpers/fault-server.js';
import { closedPort } from '../helpers/ports.js';

async function unreachable(): Promise<Record<string, string>> {
  return { SERVICE_BASE_URL: `http://127.0.0.1:${await closedPort()}`, SERVICE_API_KEY: 'gk_test', SERVICE_WORKSPACE_ID: 'ws_test' };
}

describe('gates check with no verdict', () => {
  it('--format github: an ::error annotation and a summary row when the service is down (69)', async () => {
    const summary = join(makeTempDir(), 'summary.md');
    writeFileSync(summary, '# earlier step\n');
    const result = await runCli(['gates', 'check', '--format', 'github'], { env: { ...(await unreachable()), GITHUB_STEP_SUMMARY: summary } });
    expect(result.exitCode).toBe(69);
    expect(result.stdout).toMatch(/^::error title=govctl gates check%3A no verdict::.*exit code 69\)\n$/);
    expect(result.stderr).toMatch(/^govctl: /);
    const text = readFileSync(summary, 'utf8');
    expect(text.startsWith('# earlier step\n### govctl gates check\n')).toBe(true);
    expect(text).toMatch(/\| \(no verdict\) \| \| ❌ error \| .+ \|/);
    expect(text).toContain('not checked (exit code 69)');
  });

  it('--format github: an annotation for nothing configured in CI (78) and a refused key (77)', async () => {
    const ci = await runCli(['gates', 'check', '--format', 'github'], { env: { CI: 'true', GITHUB_ACTIONS: 'true' } });
    expect(ci.exitCode).toBe(78);
    expect(ci.stdout).toMatch(/^::error title=govctl gates check%3A no verdict::.*\(exit code 78\)\n$/);
    const fault = await startFaultServer();
    try {
      fault.enqueue({ status: 401, body: { error: 'unauthorized', message: 'the API key is not valid' } });
      const refused = await runCli(['gates', 'check', '--format', 'github'], {
        env: { SERVICE_BASE_URL: fault.url, SERVICE_API_KEY: 'gk_test', SERVICE_WORKSPACE_ID: 'ws_test' },
      });
      expect(refused.exitCode).toBe(77);
      expect(refused.stdout).toMatch(/^::error .*\(exit code 77\)\n$/);
    } finally {
      await fault.close();
    }
  });

  it('--format junit: a well-formed document with one errored test case, never an empty file', async () => {
    const result = await runCli(['gates', 'check', '--format', 'junit'], { env: await unreachable() });
    expect(result.exitCode).toBe(69);
    const root = parseXml(result.stdout);
    expect(root.attributes).toMatchObject({ tests: '1', failures: '0', errors: '1' });
    const errors = findAll(root, 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0].attributes.type).toBe('network_error');
    expect(errors[0].attributes.message).toContain('127.0.0.1');
  });

  it('leaves the table format to the stderr line', async () => {
    const result = await runCli(['gates', 'check'], { env: await unreachable() });
    expect(result.exitCode).toBe(69);
    expect(result.stdout).toBe('');
  });
});

describe('--on-error warn in GitHub Actions', () => {
  it('turns a failed write into a ::warning annotation and exits 0', async () => {
    const args = ['evidence', 'import', '-', '--on-error', 'warn'];
    const input = JSON.stringify({
      record_type: 'change_event',
      system_name: 'ci-system',
      payload: { type: 'deployment', by: 'ci@example.com', description: 'release 1', environment: 'production', system: 'ci-system' },
    });
    const inActions = await runCli(args, { env: { ...(await unreachable()), GITHUB_ACTIONS: 'true' }, input });
    expect(inActions.exitCode).toBe(0);
    expect(inActions.stderr).toMatch(
      /^::warning title=govctl%3A a write failed::.*not failing%3A --on-error warn|^::warning title=govctl%3A a write failed::.*--on-error warn\)$/m,
    );
    const elsewhere = await runCli(args, { env: await unreachable(), input });
    expect(elsewhere.exitCode).toBe(0);
    expect(elsewhere.stderr).toMatch(/^govctl: warning: .*--on-error warn\)$/m);
    expect(elsewhere.stderr).not.toContain('::warning');
  });
});
