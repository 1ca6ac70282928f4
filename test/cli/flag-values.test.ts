/**
 * One rule for a malformed flag value (docs/exit-codes.md "Malformed values"): a value typed on the
 * command line that is outside its flag's own type, format, enum or range is a usage error (64),
 * found before anything is read or sent, for every flag, the ones generated from the record-type
 * catalogue included; a record that is incomplete or wrong as data (a required field missing, a bad
 * value from --payload-file) is 65. And the error text: commander's messages in the CLI's form, no
 * hint glued after a full stop, nothing said twice, plurals right.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOGUE, type FieldSpec } from '../../src/core/index.js';
import { makeHome, runCli } from '../helpers/cli.js';

const GOOD_HASH = 'a'.repeat(64);

describe("commander's errors in the CLI's own words", () => {
  it.each([
    [['gates', 'check', '--fail-on', 'nevr'], 'govctl: --fail-on must be one of soft, hard, never, got "nevr"; see `govctl gates check --help`\n'],
    [['evidence', 'list', '--limit', 'ten'], 'govctl: --limit must be a whole number, got "ten"; see `govctl evidence list --help`\n'],
    [
      ['derive', '--description', 'x', '--risk-tier', 'huge'],
      'govctl: --risk-tier must be one of unacceptable, high, limited, minimal, got "huge"; see `govctl derive --help`\n',
    ],
    [['evidence', 'list', '--days'], "govctl: option '--days <n>' argument missing; see `govctl evidence list --help`\n"],
  ])('%j', async (args, stderr) => {
    const result = await runCli(args);
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toBe(stderr);
    expect(result.stderr).not.toMatch(/\.; see/);
  });

  it('names the flag in the --json error object', async () => {
    const result = await runCli(['gates', 'check', '--fail-on', 'nevr', '--json']);
    expect(JSON.parse(result.stderr)).toEqual({ error: 'usage_error', message: '--fail-on must be one of soft, hard, never, got "nevr"', field: '--fail-on' });
  });
});

describe('a malformed value is 64 wherever the flag comes from', () => {
  it('--environment prod (change_event) is 64, said once', async () => {
    const result = await runCli([
      'evidence',
      'add',
      'change_event',
      '--system',
      's',
      '--type',
      'deployment',
      '--by',
      'a@example.com',
      '--description',
      'd',
      '--environment',
      'prod',
    ]);
    expect(result.exitCode).toBe(64);
    expect(result.stderr.match(/--environment/g)).toHaveLength(1);
    expect(result.stderr).toMatch(/--environment must be one of: production, staging, development/);
  });

  it('--input-hash abc is 64 before the other side is read', async () => {
    const result = await runCli(['attest', 'summarise', '--system', 's', '--input-hash', 'abc', '--output', 'does-not-exist.txt']);
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toMatch(/^govctl: --input-hash must be a hex SHA-256 digest \(64 hex characters\), got "abc"/);
  });

  it('SERVICE_ON_ERROR outside its choices is 78, naming the variable and the value', async () => {
    const result = await runCli(['whoami', '--base-url', 'local'], { env: { SERVICE_ON_ERROR: 'sometimes' } });
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toMatch(/^govctl: SERVICE_ON_ERROR must be one of warn, raise, silent, got "sometimes"/);
  });

  it('evidence export --since after --until is 64 before any request: an empty window is a mistake, not an export of nothing', async () => {
    const result = await runCli(['evidence', 'export', '--since', '2026-02-01', '--until', '2026-01-01', '--base-url', 'local']);
    expect(result.exitCode).toBe(64);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'govctl: --since (2026-02-01T00:00:00Z) must be before --until (2026-01-01T00:00:00Z): no record can lie between them; swap the two, or drop one\n',
    );
  });

  it('--executed-at yesterday is 64; a good attestation still goes through', async () => {
    const bad = await runCli(['attest', 'summarise', '--system', 's', '--input-hash', GOOD_HASH, '--output-hash', GOOD_HASH, '--executed-at', 'yesterday']);
    expect(bad.exitCode).toBe(64);
    expect(bad.stderr).toMatch(/--executed-at must be an ISO 8601 date and time, got "yesterday"/);
    const good = await runCli(['attest', 'summarise', '--system', 's', '--input-hash', GOOD_HASH, '--output-hash', GOOD_HASH]);
    expect(good.exitCode, good.stderr).toBe(0);
  });

  it("a required field left out is the record's (65), and so is a bad value from --payload-file", async () => {
    const missing = await runCli(['evidence', 'add', 'ai_risk_assessment', '--system', 's']);
    expect(missing.exitCode).toBe(65);
    const home = makeHome();
    writeFileSync(join(home, 'payload.json'), JSON.stringify({ risk_level: 'huge' }));
    const fromFile = await runCli(['evidence', 'add', 'ai_risk_assessment', '--system', 's', '--payload-file', 'payload.json'], { home });
    expect(fromFile.exitCode).toBe(65);
    expect(fromFile.stderr).toMatch(/--risk-level \(payload.risk_level\) must be one of/);
  });
});

/** A value outside a field's domain, or undefined when the field has none to leave (free text). */
function badValue(field: Pick<FieldSpec, 'kind' | 'enum' | 'min' | 'max'>): string | undefined {
  if (field.enum) return 'not-one-of-them';
  switch (field.kind) {
    case 'number':
      return 'abc';
    case 'integer':
      return '1.5';
    case 'date':
      return '2026-02-30';
    case 'datetime':
      return 'yesterday';
    case 'number-map':
      return 'metric=abc';
    default:
      return undefined;
  }
}

/** Every catalogue flag that has a domain, with a value outside it. */
interface Case {
  type: string;
  flag: string;
  value: string;
}

const CASES: Case[] = [...CATALOGUE.values()]
  .flatMap((spec): { type: string; flag: string; value: string | undefined }[] => [
    ...spec.fields
      .filter((field) => !field.fixed && field.flag !== 'system' && field.wire !== 'system' && field.kind !== 'boolean')
      .map((field) => ({ type: spec.type, flag: field.flag ?? field.wire.replace(/_/g, '-'), value: badValue(field) })),
    ...spec.topInputs.map((input) => ({ type: spec.type, flag: input.flag, value: badValue({ kind: input.kind, ...(input.enum && { enum: input.enum }) }) })),
    { type: spec.type, flag: 'occurred-at', value: 'yesterday' },
    { type: spec.type, flag: 'environment', value: 'prod' },
  ])
  .filter((found): found is Case => found.value !== undefined);

describe('every enum and format flag generated from the catalogue', () => {
  it('has cases for every record type', () => {
    expect(new Set(CASES.map((found) => found.type)).size).toBe(CATALOGUE.size);
    expect(CASES.length).toBeGreaterThan(40);
  });

  it.each(CASES.map((found) => [`${found.type} --${found.flag} ${found.value}`, found] as const))(
    '%s is 64, naming the flag and the value',
    async (_name, found) => {
      const result = await runCli(['evidence', 'add', found.type, '--system', 's', `--${found.flag}`, found.value, '--json']);
      expect(result.exitCode, result.stderr).toBe(64);
      const error = JSON.parse(result.stderr) as { error: string; field: string; message: string };
      expect(error.error).toBe('usage_error');
      expect(error.message).toContain(`--${found.flag}`);
      expect(error.message).toContain(`got "${found.value}"`);
    },
  );
});

describe('plurals', () => {
  it('evidence sign says "1 of 2 records is invalid"', async () => {
    const home = makeHome();
    const good = {
      record_type: 'change_event',
      system_name: 's',
      occurred_at: '2026-01-01T00:00:00Z',
      payload: { type: 'deployment', by: 'a@example.com', description: 'd', environment: 'production', system: 's' },
    };
    writeFileSync(join(home, 'r.ndjson'), `${JSON.stringify(good)}\n${JSON.stringify({ ...good, payload: {} })}\n`);
    const result = await runCli(['evidence', 'sign', 'r.ndjson', '--workspace', 'ws_1'], { home, env: { SERVICE_SIGNING_KEY: '11'.repeat(32) } });
    expect(result.exitCode).toBe(65);
    expect(result.stderr).toMatch(/cannot sign: 1 of 2 records is invalid/);
  });
});
