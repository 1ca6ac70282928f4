/**
 * Bulk and repeatable work in the CLI, in-process (`main`) against a real service on 127.0.0.1
 * and against the embedded store: batched imports that a re-run does not store twice, exports that
 * re-import to nothing new, `verify --remote` and `list --all` over all time.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from '../../src/server/store/sqlite/driver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryIO } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { BATCH_RECORDS } from '../../src/cli/evidence/import.js';
import { countPattern, makeHome, makeTempDir } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const DAY = 86_400_000;
const KEY = '5e'.repeat(32);
let server: TestServer;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  env = { SERVICE_BASE_URL: server.url, SERVICE_API_KEY: server.apiKey, HOME: makeHome() };
});
afterAll(async () => {
  await server.stop();
});

function change(system: string, n: number, daysAgo = 1): string {
  return JSON.stringify({
    record_type: 'change_event',
    system_name: system,
    occurred_at: new Date(Date.now() - daysAgo * DAY - n * 1000).toISOString(),
    payload: { type: 'deployment', by: 'ci@example.com', description: `release ${n}`, environment: 'production', system },
  });
}

async function govctl(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) {
  const io = createMemoryIO(options.stdin !== undefined ? { stdin: options.stdin } : {});
  const code = await main(args, { io, env: options.env ?? env, cwd: makeHome() });
  return { code, stdout: io.stdoutText(), stderr: io.stderrText() };
}

function storedFor(dbPath: string, system: string): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM evidence WHERE system_name = ?').get(system) as { n: number }).n;
  } finally {
    db.close();
  }
}

/**
 * Two full batches of the default size and a half one: lines stay in input order across batch
 * boundaries and through a last, partial batch, which is all a larger file would add.
 */
const BULK = 2 * BATCH_RECORDS + BATCH_RECORDS / 2;

describe('evidence import in batches, against govctl serve', () => {
  it(`imports ${BULK} records (two and a half batches) with one ordered result line each, and a re-run stores none again`, async () => {
    const file = join(makeTempDir(), 'records.ndjson');
    writeFileSync(file, Array.from({ length: BULK }, (_, n) => change('bulk-a', n)).join('\n'));
    const first = await govctl(['evidence', 'import', file, '--json']);
    expect(first.code).toBe(0);
    const lines = first.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.index)).toEqual(Array.from({ length: BULK }, (_, n) => n));
    expect(lines.every((line) => line.status === 'ok' && /^rec_/.test(line.record_id) && line.replayed === undefined)).toBe(true);
    expect(storedFor(server.dbPath, 'bulk-a')).toBe(BULK);

    const again = await govctl(['evidence', 'import', file, '--json']);
    expect(again.code).toBe(0);
    const replayed = again.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(replayed.map((line) => line.record_id)).toEqual(lines.map((line) => line.record_id));
    expect(replayed.every((line) => line.replayed === true)).toBe(true);
    // --json: stderr holds JSON only, and the summary is a notice; a run without it says it.
    expect(again.stderr).toBe('');
    const plain = await govctl(['evidence', 'import', file]);
    expect(plain.code).toBe(0);
    expect(plain.stderr).toMatch(new RegExp(`imported ${countPattern(BULK)} records in [\\d.]+ s \\(${countPattern(BULK)} already stored`));
    expect(storedFor(server.dbPath, 'bulk-a')).toBe(BULK);
  });

  it('--no-idempotency stores a record sent again again', async () => {
    const input = change('bulk-b', 1);
    await govctl(['evidence', 'import', '-'], { stdin: input });
    await govctl(['evidence', 'import', '-', '--no-idempotency'], { stdin: input });
    expect(storedFor(server.dbPath, 'bulk-b')).toBe(2);
  });

  it('--resume-from skips the records an interrupted run already did', async () => {
    const input = Array.from({ length: 5 }, (_, n) => change('bulk-c', n)).join('\n');
    const result = await govctl(['evidence', 'import', '-', '--resume-from', '3'], { stdin: input });
    expect(result.code).toBe(0);
    expect(
      result.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split('\t')[1]),
    ).toEqual(['3', '4']);
    expect(storedFor(server.dbPath, 'bulk-c')).toBe(2);
  });

  it('reports invalid records in their place and stores the rest', async () => {
    const input = [change('bulk-d', 0), '{"record_type":"change_event"}', 'not json', change('bulk-d', 3)].join('\n');
    const result = await govctl(['evidence', 'import', '-'], { stdin: input });
    expect(result.code).toBe(65);
    expect(
      result.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split('\t').slice(0, 2)),
    ).toEqual([
      ['ok', '0'],
      ['error', '1'],
      ['error', '2'],
      ['ok', '3'],
    ]);
    expect(storedFor(server.dbPath, 'bulk-d')).toBe(2);
  });

  it('takes an input of blank lines only (`echo "$EMPTY" | govctl evidence import -`) as no records, as it takes an empty one', async () => {
    for (const stdin of ['', '\n', '\n\n', ' \r\n\t\n']) {
      const result = await govctl(['evidence', 'import', '-'], { stdin });
      expect(result.code, JSON.stringify(stdin) + result.stderr).toBe(0);
      expect(result.stdout).toBe('');
    }
  });
});

describe('evidence add', () => {
  it('sends a key derived from the record: the same record added again is answered, not stored twice', async () => {
    const args = [
      'evidence',
      'add',
      'change_event',
      '--system',
      'bulk-add',
      '--type',
      'deployment',
      '--by',
      'ci@example.com',
      '--description',
      'v1',
      '--environment',
      'production',
      '--occurred-at',
      '2026-01-01T00:00:00Z',
      '--json',
    ];
    const first = await govctl(args);
    expect(first.code).toBe(0);
    const again = await govctl(args);
    expect(JSON.parse(again.stdout)).toEqual({ ...JSON.parse(first.stdout), replayed: true });
    expect(storedFor(server.dbPath, 'bulk-add')).toBe(1);
    await govctl([...args, '--no-idempotency']);
    expect(storedFor(server.dbPath, 'bulk-add')).toBe(2);
  });
});

describe('evidence export, and what reads it', () => {
  it('exports every record in full, all time, and the export re-imports to nothing new', async () => {
    const input = [change('bulk-e', 0, 400), change('bulk-e', 1, 2), change('bulk-e', 2, 1)].join('\n');
    await govctl(['evidence', 'import', '-'], { stdin: input });
    const exported = await govctl(['evidence', 'export', '--system', 'bulk-e', '--page-size', '2']);
    expect(exported.code).toBe(0);
    const lines = exported.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(exported.stderr).toMatch(/exported 3 records/);
    // Each line is the stored record exactly as GET grc/evidence/{id} returns it.
    const id = JSON.parse(lines[0]).record_id as string;
    const single = await fetch(`${server.url}/api/workspaces/${server.workspaceId}/governance/grc/evidence/${id}`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(lines[0]).toBe(await single.text());

    const reimported = await govctl(['evidence', 'import', '-', '--json'], { stdin: exported.stdout });
    expect(reimported.code).toBe(0);
    expect(storedFor(server.dbPath, 'bulk-e')).toBe(3);

    const recent = await govctl(['evidence', 'export', '--system', 'bulk-e', '--since', new Date(Date.now() - 30 * DAY).toISOString().slice(0, 10)]);
    expect(recent.stdout.trimEnd().split('\n')).toHaveLength(2);
  });

  it('evidence list --all lists all time unless --days is given', async () => {
    const all = await govctl(['evidence', 'list', '--system', 'bulk-e', '--all']);
    expect(all.stdout.trimEnd().split('\n')).toHaveLength(3);
    const windowed = await govctl(['evidence', 'list', '--system', 'bulk-e', '--all', '--days', '30']);
    expect(windowed.stdout.trimEnd().split('\n')).toHaveLength(2);
  });

  it('evidence verify --remote checks every stored record, all time, and says how many', async () => {
    const signed = { ...env, SERVICE_SIGNING_KEY: KEY, SERVICE_WORKSPACE_ID: server.workspaceId };
    await govctl(['evidence', 'import', '-'], { stdin: [change('bulk-f', 0, 500), change('bulk-f', 1, 1)].join('\n'), env: signed });
    const verified = await govctl(['evidence', 'verify', '--remote', '--system', 'bulk-f'], { env: signed });
    expect(verified.code).toBe(0);
    expect(verified.stderr).toMatch(/checked 2 stored records \(all time\)/);
    expect(
      verified.stdout
        .trimEnd()
        .split('\n')
        .every((line) => line.startsWith('valid')),
    ).toBe(true);
    const narrowed = await govctl(['evidence', 'verify', '--remote', '--system', 'bulk-f', '--days', '30'], { env: signed });
    expect(narrowed.stderr).toMatch(/checked 1 stored record \(occurred since/);
    // An unsigned record fails the check: verify --remote reads every record, not just a window.
    const unsigned = await govctl(['evidence', 'verify', '--remote', '--system', 'bulk-e'], { env: signed });
    expect(unsigned.code).toBe(2);
  });
});

describe('the embedded store', () => {
  it('imports in batches, re-runs to nothing new, and exports what it holds', async () => {
    const dataDir = makeTempDir('govctl-data-');
    const local = { HOME: makeHome() };
    const input = Array.from({ length: 30 }, (_, n) => change('local-bulk', n)).join('\n');
    const first = await govctl(['evidence', 'import', '-', '--data-dir', dataDir], { stdin: input, env: local });
    expect(first.code).toBe(0);
    const again = await govctl(['evidence', 'import', '-', '--data-dir', dataDir, '--json'], { stdin: input, env: local });
    expect(
      again.stdout
        .trimEnd()
        .split('\n')
        .every((line) => JSON.parse(line).replayed === true),
    ).toBe(true);
    expect(storedFor(join(dataDir, 'govctl.db'), 'local-bulk')).toBe(30);
    const exported = await govctl(['evidence', 'export', '--data-dir', dataDir], { env: local });
    expect(exported.stdout.trimEnd().split('\n')).toHaveLength(30);
  });
});

describe('attest batch', () => {
  it('sends idempotency keys: a re-run stores no attestation twice', async () => {
    const input = Array.from({ length: 4 }, (_, n) =>
      JSON.stringify({
        system_name: 'bulk-att',
        tool_name: `t${n}`,
        input_hash: 'a'.repeat(64),
        output_hash: 'b'.repeat(64),
        executed_at: '2026-01-01T00:00:00Z',
      }),
    ).join('\n');
    const first = await govctl(['attest', 'batch', '-', '--json'], { stdin: input });
    expect(first.code).toBe(0);
    const again = await govctl(['attest', 'batch', '-', '--json'], { stdin: input });
    const ids = (text: string) =>
      text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).attestation_id);
    expect(ids(again.stdout)).toEqual(ids(first.stdout));
    expect(
      again.stdout
        .trimEnd()
        .split('\n')
        .every((line) => JSON.parse(line).replayed === true),
    ).toBe(true);
    const db = new Database(server.dbPath, { readonly: true });
    const count = (db.prepare("SELECT count(*) AS n FROM attestations WHERE system_name = 'bulk-att'").get() as { n: number }).n;
    db.close();
    expect(count).toBe(4);
  });
});
