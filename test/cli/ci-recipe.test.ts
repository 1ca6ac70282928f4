/**
 * The recipe of docs/ci.md, as a pipeline runs it: with `CI` set and the settings in the
 * environment, `gates check` blocks the deploy, and after the deploy `evidence add change_event`
 * records it, so that the change-management controls are covered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { callService } from '../helpers/cli-fixtures.js';

let server: TestServer;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  env = {
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_ACTOR: 'octocat',
    GITHUB_SHA: '3f786850e387550fdab836ed7e6dc881de23001b',
    SERVICE_BASE_URL: server.url,
    SERVICE_API_KEY: server.apiKey,
    SERVICE_SYSTEM_NAME: 'loan-scorer',
  };
});

afterAll(async () => {
  await server?.stop();
});

describe('docs/ci.md', () => {
  it('blocks on the gate, then records the deploy as a change_event that covers change management', async () => {
    const gate = await runCli(['gates', 'check', '--format', 'github', '--fail-on', 'hard'], { env });
    expect(gate.exitCode).toBe(2);
    expect(gate.stdout).toMatch(/^::error title=EU AI Act/m);

    const record = await runCli(
      [
        'evidence',
        'add',
        'change_event',
        '--on-error',
        'warn',
        '--type',
        'deployment',
        '--by',
        `${env.GITHUB_ACTOR}@users.noreply.github.com`,
        '--description',
        `Deploy ${env.GITHUB_SHA} from main`,
        '--environment',
        'production',
        '--change-id',
        env.GITHUB_SHA,
      ],
      { env },
    );
    expect(record.exitCode, record.stderr).toBe(0);
    expect(record.stderr).not.toMatch(/warning/);

    const { body } = await callService(server, 'GET', 'grc/evidence?record_type=change_event');
    const records = (body as { records: { system_name: string; mapped_controls: string[] }[] }).records;
    expect(records).toHaveLength(1);
    expect(records[0].system_name).toBe('loan-scorer');
    expect(records[0].mapped_controls).toEqual(['ISO27001_A8_32', 'ISO42001_A6_2', 'SOC2_CC8_1']);
  });
});
