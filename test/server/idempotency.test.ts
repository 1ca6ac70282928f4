import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { provision } from '../../src/server/index.js';
import { IDEMPOTENCY_RETENTION_MS } from '../../src/server/store/idempotency.js';
import { storedRow } from '../helpers/backend.js';
import { attestation, evidenceRecord } from '../helpers/service-requests.js';
import { startInProcess, type InProcess } from '../helpers/in-process-service.js';

let service: InProcess;
beforeEach(async () => {
  service = await startInProcess();
});
afterEach(async () => {
  await service.close();
});

async function count(table: string): Promise<number> {
  return (await storedRow<{ n: number }>(service.dbPath, `SELECT count(*) AS n FROM ${table}`))!.n;
}

describe('Idempotency-Key on POST grc/evidence', () => {
  it('answers a repeat with the first result, marked as a replay, and stores nothing more', async () => {
    const record = evidenceRecord('change_event');
    const first = await service.send('POST', 'grc/evidence', record, { 'idempotency-key': 'deploy-42' });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await service.send('POST', 'grc/evidence', record, { 'idempotency-key': 'deploy-42' });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json).toEqual({ ...first.json, replayed: true });
    // the replay names the same leaf of the transparency log as the write it repeats
    expect(again.json.ledger_index).toEqual(expect.any(Number));
    expect(await count('evidence')).toBe(1);
  });

  it('refuses the same key with different content with a 422 naming the key', async () => {
    await service.send('POST', 'grc/evidence', evidenceRecord('change_event'), { 'idempotency-key': 'k' });
    const other = await service.send('POST', 'grc/evidence', evidenceRecord('vendor_risk'), { 'idempotency-key': 'k' });
    expect(other.status).toBe(422);
    expect(other.json.field).toBe('Idempotency-Key');
    expect(other.json.message).toContain('"k"');
    expect(await count('evidence')).toBe(1);
  });

  it('scopes keys per workspace', async () => {
    // Same key, other workspace: provisioned through the store, then sent with its own key.
    const other = await provision(service.dbPath, { orgName: 'o2', workspaceName: 'w2' });
    const record = evidenceRecord('change_event');
    await service.send('POST', 'grc/evidence', record, { 'idempotency-key': 'shared' });
    const reply = await service.service.app.inject({
      method: 'POST',
      url: `/api/workspaces/${other.workspace_id}/governance/grc/evidence`,
      headers: { authorization: `Bearer ${other.api_key}`, 'content-type': 'application/json', 'idempotency-key': 'shared' },
      payload: JSON.stringify(record),
    });
    expect(reply.statusCode).toBe(201);
    expect(reply.headers['idempotent-replayed']).toBeUndefined();
    expect(await count('evidence')).toBe(2);
  });

  it('holds across a restart (keys are in the database, written with the record)', async () => {
    const record = evidenceRecord('change_event');
    const first = await service.send('POST', 'grc/evidence', record, { 'idempotency-key': 'survives' });
    await service.restart();
    const again = await service.send('POST', 'grc/evidence', record, { 'idempotency-key': 'survives' });
    expect(again.json.record_id).toBe(first.json.record_id);
    expect(again.json.replayed).toBe(true);
    expect(await count('evidence')).toBe(1);
  });

  it('is honoured for 24 hours, then the key is free again', async () => {
    const record = evidenceRecord('change_event');
    await service.send('POST', 'grc/evidence', record, { 'idempotency-key': 'day' });
    service.clock.ms += IDEMPOTENCY_RETENTION_MS - 1;
    expect((await service.send('POST', 'grc/evidence', record, { 'idempotency-key': 'day' })).json.replayed).toBe(true);
    service.clock.ms += 2;
    const later = await service.send('POST', 'grc/evidence', record, { 'idempotency-key': 'day' });
    expect(later.json.replayed).toBeUndefined();
    expect(await count('evidence')).toBe(2);
  });

  it('prunes expired keys as later keyed writes commit', async () => {
    await service.send('POST', 'grc/evidence', evidenceRecord('change_event'), { 'idempotency-key': 'old' });
    service.clock.ms += IDEMPOTENCY_RETENTION_MS + 120_000;
    await service.send('POST', 'grc/evidence', evidenceRecord('change_event'), { 'idempotency-key': 'new' });
    expect(await count('idempotency_keys')).toBe(1);
  });

  it('rejects a malformed key', async () => {
    const reply = await service.send('POST', 'grc/evidence', evidenceRecord('change_event'), { 'idempotency-key': 'x'.repeat(201) });
    expect(reply.status).toBe(422);
    expect(reply.json.field).toBe('Idempotency-Key');
  });

  it('two concurrent requests with one key store one record and both get its id', async () => {
    const record = evidenceRecord('change_event');
    const replies = await Promise.all([1, 2, 3].map(() => service.send('POST', 'grc/evidence', record, { 'idempotency-key': 'race' })));
    expect(new Set(replies.map((r) => r.json.record_id)).size).toBe(1);
    expect(replies.filter((r) => r.json.replayed === true)).toHaveLength(2);
    expect(await count('evidence')).toBe(1);
  });
});

describe('idempotency_key on batch items', () => {
  it('replays items already stored, stores the new ones, and refuses a key reused with other content', async () => {
    const a = { ...evidenceRecord('change_event'), idempotency_key: 'a' };
    const b = { ...evidenceRecord('vendor_risk'), idempotency_key: 'b' };
    const first = await service.send('POST', 'grc/evidence/batch', { records: [a] });
    const second = await service.send('POST', 'grc/evidence/batch', { records: [a, b, { ...evidenceRecord('model_evaluation'), idempotency_key: 'a' }] });
    expect(second.json.results[0]).toEqual({ ...first.json.results[0], replayed: true });
    expect(second.json.results[1].status).toBe('accepted');
    expect(second.json.results[1].replayed).toBeUndefined();
    expect(second.json.results[2].status).toBe('rejected');
    expect(second.json.results[2].field).toBe('records.2.idempotency_key');
    expect(second.json).toMatchObject({ accepted: 2, rejected: 1, replayed: 1 });
    expect(await count('evidence')).toBe(2);
  });

  it('a key given twice in one batch stores the record once', async () => {
    const a = { ...evidenceRecord('change_event'), idempotency_key: 'twice' };
    const reply = await service.send('POST', 'grc/evidence/batch', { records: [a, a] });
    expect(reply.json.results[1]).toEqual({ ...reply.json.results[0], index: 1, replayed: true });
    expect(await count('evidence')).toBe(1);
  });

  it('is the same key space as the header (a single write replays a batch item)', async () => {
    const record = evidenceRecord('change_event');
    const batch = await service.send('POST', 'grc/evidence/batch', { records: [{ ...record, idempotency_key: 'both' }] });
    const single = await service.send('POST', 'grc/evidence', record, { 'idempotency-key': 'both' });
    expect(single.json.record_id).toBe(batch.json.results[0].record_id);
    expect(await count('evidence')).toBe(1);
  });
});

describe('idempotency on attestations', () => {
  it('a single attestation repeated with its key returns the first result and stores one', async () => {
    const record = attestation();
    const first = await service.send('POST', 'attestations/external', record, { 'idempotency-key': 'att-1' });
    expect(first.status).toBe(201);
    const again = await service.send('POST', 'attestations/external', record, { 'idempotency-key': 'att-1' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json.attestation_id).toBe(first.json.attestation_id);
    const conflict = await service.send('POST', 'attestations/external', attestation({ tool_name: 'other' }), { 'idempotency-key': 'att-1' });
    expect(conflict.status).toBe(422);
    expect(conflict.json.field).toBe('Idempotency-Key');
    expect(await count('attestations')).toBe(1);
  });

  it('batch items replay by key, also within one batch, and the stored attestation has no key member', async () => {
    const a = { ...attestation(), idempotency_key: 'x' };
    const first = await service.send('POST', 'attestations/batch', { records: [a, a] });
    expect(first.json.results[1]).toMatchObject({ status: 'accepted', attestation_id: first.json.results[0].attestation_id, replayed: true });
    const again = await service.send('POST', 'attestations/batch', { records: [a, { ...attestation({ tool_name: 'b' }), idempotency_key: 'x' }] });
    expect(again.json.results[0]).toMatchObject({ attestation_id: first.json.results[0].attestation_id, replayed: true });
    expect(again.json.results[1]).toMatchObject({ status: 'rejected', field: 'records.1.idempotency_key' });
    expect(await count('attestations')).toBe(1);
    const stored = (await storedRow<{ record: string }>(service.dbPath, 'SELECT record FROM attestations'))!.record;
    expect(stored).not.toContain('idempotency_key');
  });
});
