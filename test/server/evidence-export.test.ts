import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXPORT_PAGE } from '../../src/server/routes/evidence.js';
import { evidenceRecord } from '../helpers/service-requests.js';
import { startInProcess, type InProcess } from '../helpers/in-process-service.js';

let service: InProcess;
beforeEach(async () => {
  service = await startInProcess();
});
afterEach(async () => {
  await service.close();
});

const DAY = 86_400_000;

/** Stores `n` records through the batch endpoint, occurred `daysAgo` days before the clock. */
async function store(n: number, overrides: Record<string, unknown> = {}, daysAgo = 0): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < n; start += 1000) {
    const records = Array.from({ length: Math.min(1000, n - start) }, (_, i) =>
      evidenceRecord('change_event', { occurred_at: new Date(service.clock.ms - daysAgo * DAY).toISOString(), resource: `r${start + i}`, ...overrides }),
    );
    const reply = await service.send('POST', 'grc/evidence/batch', { records });
    ids.push(...reply.json.results.map((r: { record_id: string }) => r.record_id));
  }
  return ids;
}

const lines = (text: string) => text.split('\n').filter((line) => line !== '');

describe('GET grc/evidence/export', () => {
  it('streams every record, oldest first, each line the exact text GET grc/evidence/{id} returns, across pages', async () => {
    const old = await store(3, {}, 400); // older than the list's 90-day default: all time is the default here
    const recent = await store(EXPORT_PAGE + 5);
    const reply = await service.send('GET', 'grc/evidence/export');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const got = lines(reply.text);
    expect(got).toHaveLength(old.length + recent.length);
    expect(got.map((line) => JSON.parse(line).record_id)).toEqual([...old, ...recent]);
    for (const index of [0, EXPORT_PAGE, got.length - 1]) {
      const single = await service.send('GET', `grc/evidence/${JSON.parse(got[index]).record_id}`);
      expect(got[index]).toBe(single.text);
    }
  });

  it('filters by since, until, system_name and record_type', async () => {
    await store(2, {}, 10);
    const mid = await store(3, {}, 5);
    await store(1, {}, 1);
    await store(2, { system_name: 'other' });
    const since = new Date(service.clock.ms - 6 * DAY).toISOString();
    const until = new Date(service.clock.ms - 2 * DAY).toISOString();
    const windowed = lines((await service.send('GET', `grc/evidence/export?since=${since}&until=${until}`)).text);
    expect(windowed.map((line) => JSON.parse(line).record_id)).toEqual(mid);
    expect(lines((await service.send('GET', 'grc/evidence/export?system_name=other')).text)).toHaveLength(2);
    expect(lines((await service.send('GET', 'grc/evidence/export?record_type=vendor_risk')).text)).toHaveLength(0);
    const bad = await service.send('GET', 'grc/evidence/export?since=yesterday');
    expect(bad.status).toBe(422);
    expect(bad.json.field).toBe('since');
  });

  it('resumes after a record id and pages with limit', async () => {
    const ids = await store(10);
    const page = lines((await service.send('GET', 'grc/evidence/export?limit=4')).text);
    expect(page.map((line) => JSON.parse(line).record_id)).toEqual(ids.slice(0, 4));
    const rest = lines((await service.send('GET', `grc/evidence/export?after=${ids[3]}`)).text);
    expect(rest.map((line) => JSON.parse(line).record_id)).toEqual(ids.slice(4));
    const unknown = await service.send('GET', 'grc/evidence/export?after=rec_nope');
    expect(unknown.status).toBe(422);
    expect(unknown.json.field).toBe('after');
  });
});

describe('GET grc/evidence total and since', () => {
  it('answers the total the filters match on every page, and since as the lower bound', async () => {
    await store(3, {}, 10);
    await store(4, {}, 1);
    const page = await service.send('GET', 'grc/evidence?limit=2');
    expect(page.json.total).toBe(7);
    expect(page.json.records).toHaveLength(2);
    const next = await service.send('GET', `grc/evidence?limit=2&cursor=${page.json.next_cursor}`);
    expect(next.json.total).toBe(7);
    const since = new Date(service.clock.ms - 5 * DAY).toISOString();
    const recent = await service.send('GET', `grc/evidence?since=${since}&limit=200`);
    expect(recent.json.total).toBe(4);
    expect(recent.json.records).toHaveLength(4);
    const both = await service.send('GET', `grc/evidence?since=${since}&days=3`);
    expect(both.status).toBe(422);
  });
});
