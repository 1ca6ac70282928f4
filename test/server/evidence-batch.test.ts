import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { controlsEarned } from '../../src/core/index.js';
import { MAX_EVIDENCE_BATCH } from '../../src/server/routes/evidence.js';
import { evidenceRecord, PAYLOADS } from '../helpers/service-requests.js';
import { startInProcess, type InProcess } from '../helpers/in-process-service.js';
import { sqliteOnly, storedRow } from '../helpers/backend.js';
import { sqliteOf } from '../helpers/sqlite-store.js';

let service: InProcess;
beforeEach(async () => {
  service = await startInProcess();
});
afterEach(async () => {
  await service.close();
});

async function storedCount(): Promise<number> {
  return (await storedRow<{ n: number }>(service.dbPath, 'SELECT count(*) AS n FROM evidence'))!.n;
}

describe('POST grc/evidence/batch', () => {
  it('judges each record alone, stores the accepted ones, and answers one result per record in order', async () => {
    const records = [evidenceRecord('change_event'), { ...evidenceRecord('vendor_risk'), payload: {} }, 'not an object', evidenceRecord('model_evaluation')];
    const reply = await service.send('POST', 'grc/evidence/batch', { records });
    expect(reply.status).toBe(200);
    expect(reply.json.accepted).toBe(2);
    expect(reply.json.rejected).toBe(2);
    expect(reply.json.results.map((r: { index: number; status: string }) => [r.index, r.status])).toEqual([
      [0, 'accepted'],
      [1, 'rejected'],
      [2, 'rejected'],
      [3, 'accepted'],
    ]);
    const [first, bad, , last] = reply.json.results;
    expect(first.record_id).toMatch(/^rec_/);
    expect(first.mapped_controls).toEqual(controlsEarned('change_event', PAYLOADS.change_event));
    expect(bad.error).toBe('validation_error');
    expect(bad.field).toMatch(/^records\.1\.payload/);
    expect(bad.reason).toBe(bad.message);
    expect(await storedCount()).toBe(2);
    // Each accepted record is stored whole, as the single write would store it.
    const stored = await service.send('GET', `grc/evidence/${last.record_id}`);
    expect(stored.json.record_type).toBe('model_evaluation');
    expect(stored.json.payload).toEqual(PAYLOADS.model_evaluation);
  });

  it('dry run judges and maps every record and stores nothing', async () => {
    const reply = await service.send('POST', 'grc/evidence/batch?dry_run=true', { records: [evidenceRecord('change_event'), { record_type: 'nope' }] });
    expect(reply.json.accepted).toBe(1);
    expect(reply.json.results[0].record_id).toBe('00000000-0000-0000-0000-000000000000');
    expect(reply.json.results[1].status).toBe('rejected');
    expect(await storedCount()).toBe(0);
  });

  it(`refuses more than ${MAX_EVIDENCE_BATCH} records and a body without a records array`, async () => {
    const tooMany = await service.send('POST', 'grc/evidence/batch', { records: Array.from({ length: MAX_EVIDENCE_BATCH + 1 }, () => ({})) });
    expect(tooMany.status).toBe(422);
    expect(tooMany.json.field).toBe('records');
    const missing = await service.send('POST', 'grc/evidence/batch', { items: [] });
    expect(missing.status).toBe(422);
    expect(missing.json.field).toBe('records');
    expect(await storedCount()).toBe(0);
  });

  // SQLite-only: it counts the calls into SQLite's writer. PostgreSQL's one transaction per group:
  // test/server/postgres/group-commit.test.ts.
  it.skipIf(sqliteOnly)('stores the accepted records of a batch in one transaction (one commit for the whole batch)', async () => {
    const commits: number[] = [];
    const writer = sqliteOf(service.service.store).writer;
    const original = writer.write.bind(writer);
    writer.write = ((work: () => unknown) => {
      commits.push(1);
      return original(work);
    }) as typeof writer.write;
    const reply = await service.send('POST', 'grc/evidence/batch', {
      records: Array.from({ length: 50 }, (_, i) => evidenceRecord('change_event', { resource: `r${i}` })),
    });
    expect(reply.json.accepted).toBe(50);
    expect(commits).toHaveLength(1);
  });

  it('keeps the idempotency_key member out of what is stored and signed', async () => {
    const record = evidenceRecord('change_event');
    const reply = await service.send('POST', 'grc/evidence/batch', { records: [{ ...record, idempotency_key: 'k-1' }] });
    const stored = await service.send('GET', `grc/evidence/${reply.json.results[0].record_id}`);
    expect(stored.json).not.toHaveProperty('idempotency_key');
    expect(stored.text).not.toContain('k-1');
  });
});
