import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLIENT_SIG_ALGO,
  JsonFloat,
  parseJsonLossless,
  signClientSig,
  SigningKey,
  stringifyJson,
  verifyClientSig,
  type JsonValue,
} from '../../src/core/index.js';
import { provisionWorkspace, startTestServer, type TestServer } from '../helpers/server.js';
import { call, PAYLOADS, wsPath } from '../helpers/service-requests.js';

let server: TestServer;
let evidencePath: string;
const key = SigningKey.fromHex('11'.repeat(32));

beforeAll(async () => {
  server = await startTestServer();
  evidencePath = wsPath(server.workspaceId, 'grc/evidence');
});
afterAll(async () => {
  await server.stop();
});

/** A model evaluation whose payload holds 85.0, an integer beyond 2^64 and non-ASCII text, signed as any client would. */
function signedRecordText(workspaceId: string): { text: string; record: { [key: string]: JsonValue } } {
  const text = `{
    "record_type": "model_evaluation",
    "system_name": "scorer-\u00e9t\u00e9",
    "identity": "r\u00e9viseur@example.com",
    "environment": "production",
    "occurred_at": "2026-03-01T12:00:00.000+02:00",
    "payload": {
      "model_id": "m-\u2603",
      "dataset": "holdout \ud83d\ude00 \u2028",
      "accuracy": 85.0,
      "evaluated_by": "ml@example.com",
      "evaluation_type": "quarterly",
      "robustness_score": 1e-7,
      "bias_metrics": { "z": -0.0, "a": 0.1, "big": 12345678901234567890 },
      "notes": "tab\\tquote\\" slash/ caf\u00e9",
      "count": 12345678901234567890
    }
  }`;
  const record = parseJsonLossless(text) as { [key: string]: JsonValue };
  record.client_sig = signClientSig(record, workspaceId, key);
  record.client_sig_algo = CLIENT_SIG_ALGO;
  return { text: stringifyJson(record), record };
}

describe('GET grc/evidence/{record_id}', () => {
  it('returns the whole stored record, with the members as sent', async () => {
    const { text } = signedRecordText(server.workspaceId);
    const written = await call(server, 'POST', evidencePath, { body: text, headers: { 'x-govctl-source': 'cli' } });
    expect(written.status).toBe(201);
    const reply = await call(server, 'GET', `${evidencePath}/${written.json.record_id}`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    const stored = reply.json;
    expect(Object.keys(stored)).toEqual([
      'record_id',
      'record_type',
      'system_name',
      'identity',
      'environment',
      'occurred_at',
      'payload',
      'client_sig',
      'client_sig_algo',
      'source',
      'signed',
      'mapped_controls',
      'received_at',
    ]);
    expect(stored).toMatchObject({
      record_id: written.json.record_id,
      record_type: 'model_evaluation',
      system_name: 'scorer-été',
      identity: 'réviseur@example.com',
      environment: 'production',
      occurred_at: '2026-03-01T12:00:00.000+02:00',
      client_sig_algo: 'hmac-sha256',
      source: 'cli',
      signed: true,
      mapped_controls: written.json.mapped_controls,
    });
    expect(stored.resource).toBeUndefined();
    expect(Date.parse(stored.received_at)).toBeGreaterThan(0);
  });

  it('keeps the payload losslessly: 85.0, big integers, -0.0 and 1e-07 come back as they were signed', async () => {
    const { text } = signedRecordText(server.workspaceId);
    const written = await call(server, 'POST', evidencePath, { body: text });
    const reply = await call(server, 'GET', `${evidencePath}/${written.json.record_id}`);
    expect(reply.text).toContain('"accuracy":85.0');
    expect(reply.text).toContain('"count":12345678901234567890');
    expect(reply.text).toContain('"big":12345678901234567890');
    expect(reply.text).toContain('"z":-0.0');
    expect(reply.text).toContain('"robustness_score":1e-07');
    const payload = (parseJsonLossless(reply.text) as { payload: { [key: string]: JsonValue } }).payload;
    expect(payload.accuracy).toEqual(new JsonFloat(85));
    expect(payload.count).toBe(12345678901234567890n);
    expect(payload.dataset).toBe('holdout 😀 \u2028');
  });

  it('lets an auditor with the key verify client_sig on the fetched record', async () => {
    const { text } = signedRecordText(server.workspaceId);
    const written = await call(server, 'POST', evidencePath, { body: text });
    const reply = await call(server, 'GET', `${evidencePath}/${written.json.record_id}`);
    const fetched = parseJsonLossless(reply.text) as { [key: string]: JsonValue };
    expect(verifyClientSig(fetched, server.workspaceId, key)).toBe(true);
    // and not with another key, nor in another workspace
    expect(verifyClientSig(fetched, server.workspaceId, SigningKey.fromHex('22'.repeat(32)))).toBe(false);
    expect(verifyClientSig(fetched, 'ws_other', key)).toBe(false);
  });

  it('stores a record whose client_sig does not verify and reports it as signed (verification is the auditor’s)', async () => {
    const { record } = signedRecordText(server.workspaceId);
    record.client_sig = 'ab'.repeat(32);
    const written = await call(server, 'POST', evidencePath, { body: stringifyJson(record) });
    expect(written.status).toBe(201);
    const reply = await call(server, 'GET', `${evidencePath}/${written.json.record_id}`);
    expect(reply.json.signed).toBe(true);
    expect(verifyClientSig(parseJsonLossless(reply.text) as { [key: string]: JsonValue }, server.workspaceId, key)).toBe(false);
    const listed = await call(server, 'GET', `${evidencePath}?system_name=${encodeURIComponent('scorer-été')}&days=3650`);
    expect(listed.json.records.every((r: { signed: boolean }) => r.signed)).toBe(true);
  });

  it('answers 404 not_found for an unknown id and for a record of another workspace', async () => {
    const unknown = await call(server, 'GET', `${evidencePath}/rec_00000000-0000-0000-0000-000000000000`);
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toBe('not_found');

    const other = { url: server.url, ...(await provisionWorkspace(server.dbPath)) };
    const theirs = await call(other, 'POST', wsPath(other.workspaceId, 'grc/evidence'), {
      body: { record_type: 'vendor_risk', system_name: 's', payload: PAYLOADS.vendor_risk },
    });
    expect(theirs.status).toBe(201);
    const reply = await call(server, 'GET', `${evidencePath}/${theirs.json.record_id}`);
    expect(reply.status).toBe(404);
    expect(reply.json.error).toBe('not_found');
  });
});
