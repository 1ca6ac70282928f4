/**
 * A large batch never keeps another tenant waiting for the whole batch (docs/security.md, "Abusive
 * clients"): the batch routes check their items in chunks, each in a turn of the event loop of its
 * own, so a request of another workspace that arrives while a 1000-item batch is being checked is
 * answered before the batch's checks are done. No timing: the order of events is what is asserted.
 * The other request is sent from inside the batch's first item's idempotency-key look-up (the batch
 * is then certainly under way), and the batch's checks are done when it hands its rows to the store.
 * That look-up returns once the other request has been admitted by the store: on PostgreSQL the
 * admission is a round trip to the database, whose answer may take longer than the whole batch's
 * checks on a loaded machine, and the claim is about the service's event loop, not about when
 * another process answers. From there the other request needs only turns of the event loop.
 * The SQLite run is the one that proves the chunking: nothing on the batch's path waits for I/O
 * there, and without takeTurn (auth.ts inTurns) both of its tests fail. On PostgreSQL the batch's
 * record charge is itself a round trip, during which the other request is served anyway; there the
 * tests prove that both requests are answered in full and in order.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SigningKey, signWitness } from '../../src/core/index.js';
import { createApp, type ServiceApp } from '../../src/server/app.js';
import { provision as provisionWorkspace } from '../../src/server/index.js';
import { testStoreLocation } from '../helpers/backend.js';
import { attestation, evidenceRecord } from '../helpers/service-requests.js';

const BATCH = 1000;

interface Tenant {
  apiKey: string;
  workspaceId: string;
}

let service: ServiceApp;
let hog: Tenant;
let other: Tenant;

beforeEach(async () => {
  const dbPath = await testStoreLocation('fairness');
  const provision = async (name: string): Promise<Tenant> => {
    const { api_key: apiKey, workspace_id: workspaceId } = await provisionWorkspace(dbPath, { orgName: name, workspaceName: name });
    return { apiKey, workspaceId };
  };
  hog = await provision('hog');
  other = await provision('other');
  service = await createApp({ db: dbPath, ledger: { integration: 'manual' } });
});
afterEach(async () => {
  vi.restoreAllMocks();
  await service.close();
});

/**
 * Sends `records` as one batch of the hog workspace to `rest`, and the other workspace's
 * GET /api/me from inside the batch's first key look-up; returns the order in which the other
 * request was answered and the batch's checks ended (`store` is the store call the batch ends with).
 */
async function raceOtherTenant(rest: string, records: unknown[], store: 'recordAttestations' | 'recordEvidenceBatch') {
  const events: string[] = [];
  let otherReply: Promise<{ statusCode: number; body: string }> | undefined;
  let admitted!: () => void;
  const otherAdmitted = new Promise<void>((resolve) => (admitted = resolve));
  const admit = service.store.admit.bind(service.store);
  vi.spyOn(service.store, 'admit').mockImplementation(async (query) => {
    const admission = await admit(query);
    if (query.apiKey === other.apiKey) admitted();
    return admission;
  });
  const find = service.store.findIdempotent.bind(service.store);
  vi.spyOn(service.store, 'findIdempotent').mockImplementation(async (...args) => {
    if (otherReply !== undefined) return find(...args);
    otherReply = service.app.inject({ method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${other.apiKey}` } }).then((reply) => {
      events.push('other tenant answered');
      return reply;
    });
    await otherAdmitted;
    return find(...args);
  });
  const write = (service.store[store] as (...args: unknown[]) => unknown).bind(service.store);
  vi.spyOn(service.store, store).mockImplementation(((...args: unknown[]) => {
    events.push('batch checked');
    return write(...args);
  }) as never);

  const batch = await service.app.inject({
    method: 'POST',
    url: `/api/workspaces/${hog.workspaceId}/governance/${rest}`,
    headers: { authorization: `Bearer ${hog.apiKey}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ records }),
  });
  expect(otherReply).toBeDefined();
  const me = await otherReply!;
  expect(me.statusCode).toBe(200);
  expect(JSON.parse(me.body).workspace_id).toBe(other.workspaceId);
  return { events, batch: { status: batch.statusCode, json: JSON.parse(batch.body) } };
}

describe('a 1000-item batch and another tenant', () => {
  it('answers another workspace sent during a signed attestation batch before the batch is checked, and the batch in full and in order', async () => {
    const key = SigningKey.fromHex('3c'.repeat(32));
    const records = Array.from({ length: BATCH }, (_, n) => {
      const record = attestation({ input_hash: n.toString(16).padStart(64, '0') });
      return { ...record, ...signWitness(record, hog.workspaceId, key), ...(n === 0 ? { idempotency_key: 'first-item' } : {}) };
    });
    const { events, batch } = await raceOtherTenant('attestations/batch', records, 'recordAttestations');
    expect(events).toEqual(['other tenant answered', 'batch checked']);
    expect(batch.status).toBe(200);
    expect(batch.json.accepted).toBe(BATCH);
    expect(batch.json.results.map((result: { index: number }) => result.index)).toEqual(records.map((_, n) => n));
    expect(batch.json.results.every((result: { status: string; external_verified: boolean }) => result.status === 'accepted' && result.external_verified)).toBe(
      true,
    );
  });

  it('answers another workspace sent during an evidence batch before the batch is checked, and the batch in full and in order', async () => {
    const records = Array.from({ length: BATCH }, (_, n) => ({ ...evidenceRecord('change_event'), ...(n === 0 ? { idempotency_key: 'first-item' } : {}) }));
    const { events, batch } = await raceOtherTenant('grc/evidence/batch', records, 'recordEvidenceBatch');
    expect(events).toEqual(['other tenant answered', 'batch checked']);
    expect(batch.status).toBe(200);
    expect(batch.json.accepted).toBe(BATCH);
    expect(batch.json.results.map((result: { index: number }) => result.index)).toEqual(records.map((_, n) => n));
  });
});
