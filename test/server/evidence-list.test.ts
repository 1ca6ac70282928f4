import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { call, evidenceRecord, pool, wsPath } from '../helpers/service-requests.js';

const DAY = 86_400_000;
let server: TestServer;
let listPath: string;
/** the instant the last 10 records share */
let tiedMs: number;
/** what was written: id, occurred_at, type and system */
const written: { id: string; occurredAt: string; ms: number; type: string; system: string }[] = [];

beforeAll(async () => {
  server = await startTestServer();
  listPath = wsPath(server.workspaceId, 'grc/evidence');
  const now = Date.now();
  tiedMs = now - 3 * DAY;
  // 250 records: one every 10 hours back (the oldest ~100 days ago), the last 10 sharing one instant.
  const specs = Array.from({ length: 250 }, (_, i) => {
    const ms = i >= 240 ? tiedMs : now - i * 10 * 3_600_000;
    return { ms, type: i % 3 === 0 ? 'access_review' : 'change_event', system: i % 2 === 0 ? 'alpha' : 'beta' };
  });
  await pool(specs, 8, async (spec) => {
    const occurredAt = new Date(spec.ms).toISOString();
    const reply = await call(server, 'POST', listPath, {
      body: evidenceRecord(spec.type as 'change_event', { occurred_at: occurredAt, system_name: spec.system }),
    });
    expect(reply.status).toBe(201);
    written.push({ id: reply.json.record_id, occurredAt, ms: spec.ms, type: spec.type, system: spec.system });
  });
});
afterAll(async () => {
  await server.stop();
});

/** newest first by occurred_at, ties by record_id (descending) */
function expectedOrder(filter: (w: (typeof written)[number]) => boolean, sinceMs: number): string[] {
  return written
    .filter((w) => filter(w) && w.ms >= sinceMs)
    .sort((a, b) => b.ms - a.ms || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .map((w) => w.id);
}

async function listAll(query: string): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const reply = await call(server, 'GET', `${listPath}?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(reply.status).toBe(200);
    ids.push(...reply.json.records.map((r: { record_id: string }) => r.record_id));
    cursor = reply.json.next_cursor;
    pages++;
  } while (cursor);
  return { ids, pages };
}

describe('GET grc/evidence', () => {
  it('lists 50 records by default, newest first, in the spec shape', async () => {
    const reply = await call(server, 'GET', listPath);
    expect(reply.status).toBe(200);
    expect(reply.json.records).toHaveLength(50);
    const first = reply.json.records[0];
    expect(Object.keys(first).sort()).toEqual(['mapped_controls', 'occurred_at', 'record_id', 'record_type', 'signed', 'source', 'system_name']);
    expect(first.source).toBe('sdk');
    expect(first.signed).toBe(false);
    expect(reply.json.records.map((r: { record_id: string }) => r.record_id)).toEqual(expectedOrder(() => true, Date.now() - 90 * DAY).slice(0, 50));
    expect(typeof reply.json.next_cursor).toBe('string');
  });

  it('returns occurred_at exactly as sent', async () => {
    const odd = '2026-01-31T10:30:00.5+01:00';
    const at = new Date(Date.now() - DAY);
    const sent = `${at.toISOString().slice(0, 10)}T${odd.slice(11)}`;
    const reply = await call(server, 'POST', listPath, { body: evidenceRecord('vendor_risk', { occurred_at: sent, system_name: 'odd-time' }) });
    written.push({ id: reply.json.record_id, occurredAt: sent, ms: Date.parse(sent), type: 'vendor_risk', system: 'odd-time' });
    const list = await call(server, 'GET', `${listPath}?system_name=odd-time`);
    expect(list.json.records).toEqual([expect.objectContaining({ record_id: reply.json.record_id, occurred_at: sent })]);
  });

  it('breaks ties on occurred_at by record_id, descending', async () => {
    const tiedIds = new Set(written.filter((w) => w.ms === tiedMs).map((w) => w.id));
    expect(tiedIds.size).toBe(10);
    const reply = await call(server, 'GET', `${listPath}?limit=200&days=4`);
    const ids: string[] = reply.json.records.map((r: { record_id: string }) => r.record_id);
    const positions = ids.flatMap((id, i) => (tiedIds.has(id) ? [i] : []));
    expect(positions).toHaveLength(10);
    expect(positions.at(-1)! - positions[0]).toBe(9); // together
    const tied = positions.map((i) => ids[i]);
    expect(tied).toEqual([...tied].sort().reverse());
  });

  it('pages through every record in the window with next_cursor, without gaps or repeats', async () => {
    const { ids, pages } = await listAll('limit=37&days=365');
    expect(ids).toEqual(expectedOrder(() => true, 0));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThanOrEqual(250);
    expect(pages).toBe(Math.ceil(ids.length / 37));
  });

  it('answers at most 200 records per page and no next_cursor on the last page', async () => {
    const first = await call(server, 'GET', `${listPath}?limit=200&days=365`);
    expect(first.json.records).toHaveLength(200);
    const second = await call(server, 'GET', `${listPath}?limit=200&days=365&cursor=${encodeURIComponent(first.json.next_cursor)}`);
    expect(second.json.records.length).toBeGreaterThanOrEqual(50);
    expect(second.json.next_cursor).toBeUndefined();
  });

  it('looks back 90 days by default and `days` days when given', async () => {
    const now = Date.now();
    const all = await listAll('limit=200');
    expect(all.ids).toEqual(expectedOrder(() => true, now - 90 * DAY));
    expect(all.ids.length).toBeLessThan(written.length);
    const week = await listAll('limit=200&days=7');
    expect(week.ids).toEqual(expectedOrder(() => true, now - 7 * DAY));
  });

  it('filters by system_name and record_type, alone and together', async () => {
    const since = Date.now() - 365 * DAY;
    expect((await listAll('days=365&limit=200&system_name=alpha')).ids).toEqual(expectedOrder((w) => w.system === 'alpha', since));
    expect((await listAll('days=365&limit=200&record_type=access_review')).ids).toEqual(expectedOrder((w) => w.type === 'access_review', since));
    expect((await listAll('days=365&limit=50&record_type=change_event&system_name=beta')).ids).toEqual(
      expectedOrder((w) => w.type === 'change_event' && w.system === 'beta', since),
    );
    expect((await call(server, 'GET', `${listPath}?system_name=nobody`)).json).toEqual({ records: [], total: 0 });
  });

  it('answers 422 naming the parameter for a limit above 200, a bad days, a bad type and a bad cursor', async () => {
    const cases: [string, string][] = [
      ['limit=201', 'limit'],
      ['limit=0', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=ten', 'limit'],
      ['limit=5&limit=6', 'limit'],
      ['days=1.5', 'days'],
      ['days=abc', 'days'],
      ['days=', 'days'],
      ['days=1e3', 'days'],
      ['record_type=nonsense', 'record_type'],
      ['cursor=not-a-cursor', 'cursor'],
      [`cursor=${Buffer.from('[1,2]').toString('base64url')}`, 'cursor'],
      // well formed, but no record of this workspace has that id
      [`cursor=${Buffer.from(JSON.stringify([Date.now(), 'rec_00000000-0000-7000-8000-000000000000'])).toString('base64url')}`, 'cursor'],
    ];
    for (const [query, field] of cases) {
      const reply = await call(server, 'GET', `${listPath}?${query}`);
      expect(reply.status, query).toBe(422);
      expect(reply.json.error).toBe('validation_error');
      expect(reply.json.field, query).toBe(field);
    }
  });
});
