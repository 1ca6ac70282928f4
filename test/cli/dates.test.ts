/**
 * Dates on the command line: a date in the right form that does not exist is reported as such,
 * and an `--occurred-at` in the future is stored with a warning that it counts from its arrival.
 */
import { describe, expect, it } from 'vitest';
import { validateRecord } from '../../src/core/records/validate.js';
import { makeTempDir, runCli } from '../helpers/cli.js';

const add = (dataDir: string, ...extra: string[]) =>
  runCli([
    'evidence',
    'add',
    'change_event',
    '--system',
    'dated',
    '--type',
    'deployment',
    '--by',
    'ci@example.com',
    '--description',
    'release',
    '--environment',
    'production',
    '--base-url',
    'local',
    '--data-dir',
    dataDir,
    ...extra,
  ]);

describe('dates', () => {
  it('says that 2026-02-30 does not exist instead of asking for the form it has', () => {
    const record = {
      record_type: 'vendor_risk',
      system_name: 's',
      occurred_at: '2026-02-30T10:00:00Z',
      payload: { vendor: 'v', risk_level: 'low', last_reviewed: '2026-02-30', system: 's' },
    };
    const issues = validateRecord(record);
    const messages = issues.filter((found) => found.path.endsWith('occurred_at') || found.path.endsWith('last_reviewed')).map((found) => found.message);
    expect(messages).toEqual(['2026-02-30 is not a day of the calendar', '2026-02-30 is not a day of the calendar']);
    expect(validateRecord({ ...record, occurred_at: '30/02/2026' }).find((found) => found.path === 'occurred_at')?.message).toContain('ISO 8601');
  });

  it('refuses --occurred-at 2026-02-30T10:00:00Z saying the day does not exist', async () => {
    const result = await add(makeTempDir(), '--occurred-at', '2026-02-30T10:00:00Z');
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toContain('2026-02-30 is not a day of the calendar');
  });

  it('stores a record dated in the future with a warning', async () => {
    const result = await add(makeTempDir(), '--occurred-at', '2099-01-01T00:00:00Z');
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/warning: occurred_at 2099-01-01T00:00:00Z is in the future: .*counts from when it arrives/);
    const now = await add(makeTempDir());
    expect(now.stderr).not.toContain('in the future');
  });
});
