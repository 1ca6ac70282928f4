/**
 * The service commands end to end against a real service (startTestServer: 127.0.0.1, a real
 * SQLite file): whoami, evidence add/list/import/verify --remote, attest and attest batch, with
 * their piped and JSON shapes, exit codes reached by real causes, and secrets kept out of output.
 * One server for the file; each test uses its own system names so that tests do not see each other.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/index.js';
import { main } from '../../src/cli/main.js';
import { createMemoryIO } from '../../src/cli/io.js';
import { ensureBuilt, makeHome, runCli, runProcess } from '../helpers/cli.js';
import { closedPort } from '../helpers/ports.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const KEY = '5e'.repeat(32);
const OTHER_KEY = '6f'.repeat(32);
let server: TestServer;
let env: Record<string, string>;

beforeAll(async () => {
  await ensureBuilt();
  server = await startTestServer({ rateLimitPerMinute: 1_000_000 });
  env = { SERVICE_BASE_URL: server.url, SERVICE_API_KEY: server.apiKey };
});

afterAll(async () => {
  await server?.stop();
});

const riskFlags = (system: string) => [
  'evidence',
  'add',
  'ai_risk_assessment',
  '--system',
  system,
  '--risk-level',
  'high',
  '--risk-summary',
  'Scores consumer loan applications',
  '--intended-purpose',
  'Assist underwriters',
  '--impact-domain',
  'credit',
  '--impact-domain',
  'employment',
  '--art5-self-assessment',
  '--annex-iii-category',
  'essential_services',
  '--assessor',
  'alice@example.com',
];

const changeRecord = (system: string, n: number) =>
  JSON.stringify({
    record_type: 'change_event',
    system_name: system,
    payload: { type: 'deployment', by: 'ci@example.com', description: `release ${n}`, environment: 'production', system },
  });

describe('whoami', () => {
  it('prints the identity as name<TAB>value lines, and the body with --json', async () => {
    const piped = await runCli(['whoami'], { env });
    expect(piped.exitCode).toBe(0);
    expect(piped.stdout).toBe(`user_id\t${server.userId}\nworkspace_id\t${server.workspaceId}\norg_id\t${server.orgId}\n`);
    expect(piped.stderr).toBe('');
    const json = await runCli(['whoami', '--json'], { env });
    expect(JSON.parse(json.stdout)).toEqual({ user_id: server.userId, workspace_id: server.workspaceId, org_id: server.orgId });
    expect(json.stdout.split('\n')).toHaveLength(2);
  });

  it('exits 77 for a key the service does not know', async () => {
    const result = await runCli(['whoami'], { env: { ...env, SERVICE_API_KEY: 'gk_not_a_real_key_123456' } });
    expect(result.exitCode).toBe(77);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^govctl: GET \/api\/me failed: 401 unauthorized: .*\n$/);
    expect(result.stderr).not.toContain('gk_not_a_real_key_123456');
  });

  it('exits 69 when nothing listens on the port', async () => {
    const result = await runCli(['whoami'], { env: { ...env, SERVICE_BASE_URL: `http://127.0.0.1:${await closedPort()}` } });
    expect(result.exitCode).toBe(69);
    expect(result.stderr).toContain('cannot reach the service');
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('exits 78 with an API key but no base URL', async () => {
    const result = await runCli(['whoami'], { env: { SERVICE_API_KEY: server.apiKey } });
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain('SERVICE_BASE_URL is required with an API key');
    expect(result.stderr).not.toContain(server.apiKey);
  });

  it('exits 78 for a workspace the key does not belong to', async () => {
    const result = await runCli(['evidence', 'list', '--workspace', 'ws_00000000-0000-0000-0000-000000000000'], { env });
    expect(result.exitCode).toBe(78);
  });

  it('reads the API key from a file or stdin, never from a flag value', async () => {
    const home = makeHome();
    writeFileSync(join(home, 'api.key'), `${server.apiKey}\n`, { mode: 0o600 });
    const fromFile = await runCli(['whoami', '--api-key-file', 'api.key', '--base-url', server.url], { home });
    expect(fromFile.exitCode).toBe(0);
    const fromStdin = await runCli(['whoami', '--api-key-file', '-', '--base-url', server.url], { input: server.apiKey });
    expect(fromStdin.exitCode).toBe(0);
    expect(fromStdin.stdout).toContain(server.workspaceId);
    // A committed project file names the key file instead of holding the key.
    writeFileSync(join(home, '.govctlrc.json'), JSON.stringify({ baseUrl: server.url, apiKeyFile: '~/api.key' }));
    // A process: the home directory shown as `~` is the process's (displayPath reads os.homedir()).
    const fromConfig = await runProcess(['whoami', '-v'], { home });
    expect(fromConfig.exitCode).toBe(0);
    expect(fromConfig.stderr).toContain('API key from ~/.govctlrc.json (apiKeyFile');
    expect(fromConfig.stderr).not.toContain(server.apiKey);
  });
});

describe('-v traces requests with the key masked', () => {
  it('shows method, URL, status and duration, and never the API key or the signing key', async () => {
    const result = await runCli([...riskFlags('traced'), '-v'], { env: { ...env, SERVICE_SIGNING_KEY: KEY } });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(new RegExp(`GET ${server.url}/api/me authorization: Bearer \\*\\*\\* → 200 in \\d+ ms`));
    expect(result.stderr).toMatch(/POST .*\/governance\/grc\/evidence authorization: Bearer \*\*\* → 201 in \d+ ms/);
    for (const secret of [server.apiKey, KEY]) {
      expect(result.stdout).not.toContain(secret);
      expect(result.stderr).not.toContain(secret);
    }
  });
});

describe('evidence add', () => {
  it("runs each record type's help example as given (with --dry-run)", async () => {
    const types = (await runCli(['evidence', 'add', '--help'])).stdout.match(/^ {2}([a-z_]+) \[options\]/gm)!.map((line) => line.trim().split(' ')[0]);
    expect(types).toHaveLength(11);
    const results = await Promise.all(
      types.map(async (type) => {
        const help = (await runCli(['evidence', 'add', type, '--help'])).stdout;
        const example = help
          .split('Examples:\n')[1]
          .split('\n')[0]
          .replace(/^\s*\$ govctl /, '');
        // The words as a shell splits them (quotes, escapes), run in-process.
        const words = execFileSync('bash', ['-c', `printf '%s\\0' ${example}`], { encoding: 'utf8' })
          .split('\0')
          .slice(0, -1);
        return { type, result: await runCli([...words, '--dry-run'], { env }) };
      }),
    );
    for (const { type, result } of results) expect({ type, exitCode: result.exitCode, stderr: result.stderr }).toEqual({ type, exitCode: 0, stderr: '' });
  });

  it('stores a record: id, type, detail and controls on one piped line', async () => {
    const result = await runCli(riskFlags('add-piped'), { env });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^rec_\S+\tai_risk_assessment\tok\t[A-Z0-9_,]*EUAIA_ART9[A-Z0-9_,]*\n$/);
    const listed = JSON.parse((await runCli(['evidence', 'list', '--system', 'add-piped', '--json'], { env })).stdout);
    expect(listed.records[0]).toMatchObject({ record_id: result.stdout.split('\t')[0], source: 'cli', signed: false });
  });

  it('prints exactly the service body with --json', async () => {
    const result = await runCli([...riskFlags('add-json'), '--json'], { env });
    const body = JSON.parse(result.stdout);
    expect(Object.keys(body).sort()).toEqual(['detail', 'ledger_index', 'mapped_controls', 'record_id', 'record_type']);
    expect(body.detail).toBe('ok');
  });

  it('shows the controls it would earn with --dry-run and stores nothing', async () => {
    const result = await runCli([...riskFlags('add-dry'), '--dry-run', '--json'], { env });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ record_id: '00000000-0000-0000-0000-000000000000', detail: 'dry_run' });
    const listed = await runCli(['evidence', 'list', '--system', 'add-dry', '--json'], { env });
    expect(JSON.parse(listed.stdout).records).toEqual([]);
  });

  it('lists every bad field at once, by flag, and exits 64 (malformed flag values) without calling the service', async () => {
    const result = await runCli(
      ['evidence', 'add', 'model_evaluation', '--system', 's', '--accuracy', 'abc', '--evaluation-type', 'yearly', '--bias-metric', 'nope'],
      {
        env: { ...env, SERVICE_BASE_URL: `http://127.0.0.1:${await closedPort()}` },
      },
    );
    expect(result.exitCode).toBe(64);
    expect(result.stdout).toBe('');
    const line = result.stderr;
    expect(line.split('\n')).toHaveLength(2);
    for (const part of [
      '--accuracy (payload.accuracy) must be a number, got "abc"',
      '--bias-metric (payload.bias_metrics) takes name=number, got "nope"',
      '--model-id (payload.model_id) is required',
      '--evaluated-by (payload.evaluated_by) is required',
      '--evaluation-type (payload.evaluation_type) must be one of: initial, quarterly, triggered',
    ]) {
      expect(line).toContain(part);
    }
  });

  it('takes the payload from --payload-file on stdin, keeping numbers as written, and signs', async () => {
    const payload = '{"model_id":"m1","dataset":"d1","accuracy":85.0,"evaluated_by":"eve@example.com","bias_metrics":{"dp":0.04}}';
    const result = await runCli(['evidence', 'add', 'model_evaluation', '--system', 'payload-file', '--payload-file', '-', '--robustness-score', '0.7'], {
      env: { ...env, SERVICE_SIGNING_KEY: KEY },
      input: payload,
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('EUAIA_ART15');
    const verified = await runCli(['evidence', 'verify', '--remote', '--system', 'payload-file'], { env: { ...env, SERVICE_SIGNING_KEY: KEY } });
    expect(verified.exitCode).toBe(0);
    expect(verified.stdout).toMatch(/^valid\t0\tmodel_evaluation\tpayload-file\trec_\S+\n$/);
  });

  it('turns a failed write into a warning with --on-error warn, and into nothing with silent', async () => {
    const bad = { ...env, SERVICE_API_KEY: 'gk_wrong_key_for_on_error' };
    const raised = await runCli(riskFlags('on-error'), { env: bad });
    expect(raised.exitCode).toBe(77);
    const warned = await runCli([...riskFlags('on-error'), '--on-error', 'warn'], { env: bad });
    expect(warned.exitCode).toBe(0);
    expect(warned.stdout).toBe('');
    expect(warned.stderr).toMatch(/^govctl: warning: .*401 unauthorized.*\(not failing: --on-error warn\)\n$/);
    const silent = await runCli(riskFlags('on-error'), { env: { ...bad, SERVICE_ON_ERROR: 'silent' } });
    expect(silent).toEqual({ exitCode: 0, stdout: '', stderr: '' });
  });
});

describe('evidence import and list', () => {
  it('stores NDJSON records with one result line each, in order, and 65 when any is bad', async () => {
    const input = [
      changeRecord('import-mixed', 0),
      '{not json',
      changeRecord('import-mixed', 2).replace('"production"', '"prod"'),
      changeRecord('import-mixed', 3),
    ].join('\n');
    const result = await runCli(['evidence', 'import', '-'], { env, input });
    expect(result.exitCode).toBe(65);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^ok\t0\trec_\S+\tISO27001_A8_32,ISO42001_A6_2,SOC2_CC8_1$/);
    expect(lines[1]).toBe('error\t1\tinvalid_json\t-\tline 2: Expecting property name enclosed in double quotes (column 2)');
    expect(lines[2]).toMatch(/^error\t2\tvalidation_error\tpayload\.environment\t/);
    expect(lines[3]).toMatch(/^ok\t3\trec_/);
    expect(result.stderr).toBe('govctl: imported 2 of 4 records; 2 failed (see the error lines on stdout); fix the failed records and send them again\n');
  });

  it('writes NDJSON results with --json, and stops at the first failure with --fail-fast', async () => {
    const input = [changeRecord('import-json', 0), '[]', changeRecord('import-json', 2)].join('\n');
    const result = await runCli(['evidence', 'import', '-', '--json', '--fail-fast'], { env, input });
    expect(result.exitCode).toBe(65);
    const lines = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ index: 0, status: 'ok', record_type: 'change_event', detail: 'ok' });
    expect(lines[1]).toEqual({ index: 1, status: 'error', error: 'validation_error', message: 'the record must be a JSON object' });
    expect(lines.length).toBeLessThanOrEqual(3);
    expect(result.stderr).toContain('--fail-fast');
  });

  it('lists past the 200-record page with --all, as TSV and as {records}', async () => {
    const home = makeHome();
    const count = 450;
    writeFileSync(join(home, 'many.json'), `[${Array.from({ length: count }, (_, n) => changeRecord('paged', n)).join(',')}]`);
    const imported = await runCli(['evidence', 'import', 'many.json'], { env, home });
    expect(imported.exitCode).toBe(0);
    expect(imported.stdout.trimEnd().split('\n')).toHaveLength(count);

    const piped = await runCli(['evidence', 'list', '--system', 'paged', '--all'], { env });
    expect(piped.exitCode).toBe(0);
    const rows = piped.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split('\t'));
    expect(rows).toHaveLength(count);
    expect(new Set(rows.map((row) => row[0])).size).toBe(count);
    expect(rows[0]).toEqual([
      expect.stringMatching(/^rec_/),
      'change_event',
      'paged',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      'false',
      'import',
      'ISO27001_A8_32,ISO42001_A6_2,SOC2_CC8_1',
    ]);

    const json = await runCli(['evidence', 'list', '--system', 'paged', '--all', '--json'], { env });
    const body = JSON.parse(json.stdout);
    expect(Object.keys(body)).toEqual(['records']);
    expect(body.records).toHaveLength(count);

    const page = await runCli(['evidence', 'list', '--system', 'paged', '--limit', '10', '--json'], { env });
    const first = JSON.parse(page.stdout);
    expect(first.records).toHaveLength(10);
    expect(typeof first.next_cursor).toBe('string');
    const next = await runCli(['evidence', 'list', '--system', 'paged', '--limit', '10', '--cursor', first.next_cursor, '--json'], { env });
    expect(JSON.parse(next.stdout).records[0].record_id).not.toBe(first.records[0].record_id);
  });

  it('exits 0 with nothing on stdout for an empty list', async () => {
    const result = await runCli(['evidence', 'list', '--system', 'nothing-here', '--type', 'vendor_risk'], { env });
    expect(result).toEqual({ exitCode: 0, stdout: '', stderr: '' });
  });

  it('stores nothing with --dry-run', async () => {
    const result = await runCli(['evidence', 'import', '-', '--dry-run'], { env, input: changeRecord('import-dry', 0) });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^ok\t0\t00000000-0000-0000-0000-000000000000\t/);
    expect(result.stderr).toMatch(/checked 1 record in .* \(dry run: nothing stored\)/);
    expect((await runCli(['evidence', 'list', '--system', 'import-dry'], { env })).stdout).toBe('');
  });

  it('draws a table on a terminal (in-process, an IO that claims a TTY)', async () => {
    const io = createMemoryIO({ isTTY: true, noColor: true });
    const code = await main(['evidence', 'list', '--system', 'paged', '--limit', '3'], { io, env: { ...env, HOME: makeHome() }, cwd: makeHome() });
    expect(code).toBe(0);
    const lines = io.stdoutText().split('\n');
    // 100 columns: the ids stay whole, so the borders give way.
    expect(lines[0]).toMatch(/^RECORD ID\s+TYPE\s+SYSTEM\s+OCCURRED\s+SIGNED\s+SOURCE\s+CONTROLS$/);
    expect(lines[1]).toMatch(/^rec_[0-9a-f-]{36}\s+change_event\s+paged\s+(just now|\d+ minutes? ago)\s+✗\s+import\s+3$/);
    expect(io.stderrText()).toMatch(/more records: add --all, or\s+--cursor\s+\S+/);
  });
});

describe('evidence verify --remote', () => {
  it('finds records signed with another key and unsigned ones (2)', async () => {
    const signedInput = [changeRecord('remote', 0), changeRecord('remote', 1)].join('\n');
    expect((await runCli(['evidence', 'import', '-'], { env: { ...env, SERVICE_SIGNING_KEY: KEY }, input: signedInput })).exitCode).toBe(0);
    const ok = await runCli(['evidence', 'verify', '--remote', '--system', 'remote'], { env: { ...env, SERVICE_SIGNING_KEY: KEY } });
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout.trimEnd().split('\n')).toHaveLength(2);

    const wrongKey = await runCli(['evidence', 'verify', '--remote', '--system', 'remote', '--json'], { env: { ...env, SERVICE_SIGNING_KEY: OTHER_KEY } });
    expect(wrongKey.exitCode).toBe(2);
    expect(JSON.parse(wrongKey.stdout)).toMatchObject({ verified: 0, failed: 2 });

    await runCli(['evidence', 'import', '-'], { env, input: changeRecord('remote', 2) });
    const unsigned = await runCli(['evidence', 'verify', '--remote', '--system', 'remote'], { env: { ...env, SERVICE_SIGNING_KEY: KEY } });
    expect(unsigned.exitCode).toBe(2);
    // --remote reads the export: oldest first, so the record stored last is #2.
    expect(unsigned.stdout).toMatch(/^unsigned\t2\tchange_event\tremote\trec_/m);
    expect(unsigned.stderr).toMatch(/^govctl: 1 of 3 records does not verify: #2 \(change_event, remote, rec_\S+\) unsigned;/);
  });
});

describe('attest', () => {
  it('hashes files, signs and pushes one attestation (witnessed)', async () => {
    const home = makeHome();
    writeFileSync(join(home, 'in.txt'), 'prompt');
    writeFileSync(join(home, 'out.txt'), 'answer');
    const result = await runCli(['attest', 'summarise', '--input', 'in.txt', '--output', 'out.txt', '--system', 'attested', '--model-id', 'm-1'], {
      env: { ...env, SERVICE_SIGNING_KEY: KEY },
      home,
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^att_\S+\twitnessed\ttrue\tok\n$/);
  });

  it('pushes an unsigned attestation from stdin as declared, and prints the body with --json', async () => {
    const hash = sha256Hex('in');
    const result = await runCli(['attest', 'classify', '--input-hash', hash, '--output', '-', '--system', 'attested', '--json'], { env, input: 'out' });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ trust_tier: 'declared', external_verified: false, detail: 'ok' });
  });

  it('pushes a batch in chunks with one line per record, and 65 when any is rejected', async () => {
    const hash = sha256Hex('x');
    const lines = [
      JSON.stringify({ tool_name: 'a', input_hash: hash, output_hash: hash }),
      JSON.stringify({ toolName: 'b', inputHash: hash, outputHash: hash }),
      JSON.stringify({ tool_name: 'c', input_hash: 'short', output_hash: hash }),
      JSON.stringify({ tool_name: 'd', input_hash: hash, output_hash: hash }),
    ].join('\n');
    const result = await runCli(['attest', 'batch', '-', '--system', 'batched', '--batch-size', '2'], {
      env: { ...env, SERVICE_SIGNING_KEY: KEY },
      input: lines,
    });
    expect(result.exitCode).toBe(65);
    const out = result.stdout.trimEnd().split('\n');
    expect(out).toHaveLength(4);
    expect(out[0]).toMatch(/^ok\t0\tatt_\S+\twitnessed$/);
    expect(out[1]).toMatch(/^ok\t1\tatt_\S+\twitnessed$/);
    expect(out[2]).toMatch(/^error\t2\tvalidation_error\tinput_hash\t/);
    expect(out[3]).toMatch(/^ok\t3\tatt_/);
  });
});
