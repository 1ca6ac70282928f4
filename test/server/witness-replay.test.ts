/**
 * A witness signature is accepted once in the whole service (docs/security.md): a replay, single
 * or in a batch (also twice inside one batch, or concurrently, or after a restart, or into another
 * workspace), is a 422 on `witness_sig` and stores nothing. The legacy form verifies only with an
 * executed_at, and binds nothing but the hashes and the time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize, SigningKey, signWitness } from '../../src/core/index.js';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { storedRow } from '../helpers/backend.js';
import { provisionWorkspace, startTestServer, type TestServer } from '../helpers/server.js';
import { attestation, call, countRows, wsPath } from '../helpers/service-requests.js';

let server: TestServer;
let externalPath: string;
let batchPath: string;
const key = SigningKey.fromHex('5a'.repeat(32));
let counter = 0;

beforeAll(async () => {
  server = await startTestServer();
  externalPath = wsPath(server.workspaceId, 'attestations/external');
  batchPath = wsPath(server.workspaceId, 'attestations/batch');
});
afterAll(async () => {
  await server.stop();
});

/** A fresh attestation (its own input hash) signed in the canonical form for `workspaceId`. */
function fresh(workspaceId = server.workspaceId, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter += 1;
  const record = attestation({ input_hash: counter.toString(16).padStart(64, '0'), ...overrides });
  return { ...record, ...signWitness(record, workspaceId, key) };
}

function legacySigned(record: Record<string, unknown>, message = `${record.input_hash}:${record.output_hash}:${record.executed_at}`): Record<string, unknown> {
  return { ...record, witness_sig: key.ed25519SignHex(message), verifying_key_hex: key.publicKeyHex };
}

const rows = (workspaceId = server.workspaceId) => countRows(server.dbPath, 'attestations', workspaceId);

describe('a witness_sig is accepted once', () => {
  it('refuses a single replay with 422 on witness_sig and stores nothing', async () => {
    const record = fresh();
    expect((await call(server, 'POST', externalPath, { body: record })).status).toBe(201);
    const before = rows();
    const replay = await call(server, 'POST', externalPath, { body: record });
    expect(replay.status).toBe(422);
    expect(replay.json).toMatchObject({ error: 'validation_error', field: 'witness_sig' });
    expect(replay.json.message).toMatch(/accepted before/);
    expect(rows()).toBe(before);
  });

  it('treats the upper-case hex of a stored signature as the same signature', async () => {
    const record = fresh();
    expect((await call(server, 'POST', externalPath, { body: record })).status).toBe(201);
    const upper = { ...record, witness_sig: (record.witness_sig as string).toUpperCase() };
    const replay = await call(server, 'POST', externalPath, { body: upper });
    expect(replay.status).toBe(422);
    expect(replay.json.field).toBe('witness_sig');
  });

  it('rejects a batch item that replays a stored signature, and the second of two equal items, storing the rest', async () => {
    const stored = fresh();
    expect((await call(server, 'POST', externalPath, { body: stored })).status).toBe(201);
    const twice = fresh();
    const other = fresh();
    const before = rows();
    const reply = await call(server, 'POST', batchPath, { body: { records: [stored, twice, other, twice, attestation(), attestation()] } });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ accepted: 4, rejected: 2 });
    const results = reply.json.results;
    expect(results.map((r: { status: string }) => r.status)).toEqual(['rejected', 'accepted', 'accepted', 'rejected', 'accepted', 'accepted']);
    expect(results[0]).toMatchObject({ index: 0, error: 'validation_error', field: 'records.0.witness_sig' });
    expect(results[3]).toMatchObject({ index: 3, error: 'validation_error', field: 'records.3.witness_sig' });
    expect(results[0].attestation_id).toBeUndefined();
    expect(rows()).toBe(before + 4);
    // the accepted ids are the stored ones
    for (const i of [1, 2, 4, 5])
      expect(await storedRow(server.dbPath, 'SELECT count(*) AS n FROM attestations WHERE attestation_id = ?', [results[i].attestation_id])).toEqual({ n: 1 });
  });

  it('refuses the replay of a signed attestation without executed_at (stored each time with the time of ingest)', async () => {
    const record = fresh();
    delete record.executed_at;
    const { witness_sig: _sig, verifying_key_hex: _key, ...unsigned } = record;
    const signedAgain = { ...unsigned, ...signWitness(unsigned, server.workspaceId, key) };
    expect((await call(server, 'POST', externalPath, { body: signedAgain })).status).toBe(201);
    const replay = await call(server, 'POST', externalPath, { body: signedAgain });
    expect(replay.status).toBe(422);
    expect(replay.json.field).toBe('witness_sig');
  });

  it('accepts exactly one of ten concurrent posts of one signed attestation', async () => {
    const record = fresh();
    const before = rows();
    const replies = await Promise.all(Array.from({ length: 10 }, () => call(server, 'POST', externalPath, { body: record })));
    expect(replies.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(422)]);
    for (const r of replies.filter((reply) => reply.status === 422)) expect(r.json.field).toBe('witness_sig');
    expect(rows()).toBe(before + 1);
  });

  it('refuses a replay into another workspace of a legacy-form signature (which verifies there)', async () => {
    const other = await provisionWorkspace(server.dbPath);
    const record = legacySigned(attestation({ input_hash: 'c'.repeat(64) }));
    const first = await call(server, 'POST', externalPath, { body: record });
    expect(first.status).toBe(201);
    expect(first.json.trust_tier).toBe('witnessed');
    const moved = { ...record, system_name: 'another-system', tool_name: 'another-tool' };
    const replay = await call({ url: server.url, apiKey: other.apiKey }, 'POST', wsPath(other.workspaceId, 'attestations/external'), { body: moved });
    expect(replay.status).toBe(422);
    expect(replay.json.field).toBe('witness_sig');
    expect(rows(other.workspaceId)).toBe(0);
  });

  it('still refuses a replay after the service restarts on the same database', async () => {
    const restartable = await startTestServer();
    const path = wsPath(restartable.workspaceId, 'attestations/external');
    let again: RunningServer | undefined;
    try {
      const record = fresh(restartable.workspaceId);
      expect((await call(restartable, 'POST', path, { body: record })).status).toBe(201);
      await restartable.server.close();
      again = await startServer({ host: '127.0.0.1', port: 0, db: restartable.dbPath });
      const replay = await call({ url: again.url, apiKey: restartable.apiKey }, 'POST', path, { body: record });
      expect(replay.status).toBe(422);
      expect(replay.json.field).toBe('witness_sig');
      const batch = await call({ url: again.url, apiKey: restartable.apiKey }, 'POST', wsPath(restartable.workspaceId, 'attestations/batch'), {
        body: { records: [record] },
      });
      expect(batch.json).toMatchObject({ accepted: 0, rejected: 1 });
      expect(batch.json.results[0].field).toBe('records.0.witness_sig');
      expect(countRows(restartable.dbPath, 'attestations', restartable.workspaceId)).toBe(1);
    } finally {
      await again?.close();
      await restartable.stop();
    }
  });
});

describe('the legacy form', () => {
  it('does not verify without executed_at: the message would end in "undefined"', async () => {
    const record = attestation({ input_hash: 'd'.repeat(64) });
    delete record.executed_at;
    const forged = legacySigned(record, `${record.input_hash}:${record.output_hash}:undefined`);
    const before = rows();
    for (const [path, body] of [
      [externalPath, forged],
      [batchPath, { records: [forged] }],
    ] as const) {
      const reply = await call(server, 'POST', path, { body });
      expect(reply.status, reply.text).toBe(path === batchPath ? 200 : 422);
      const error = path === batchPath ? reply.json.results[0] : reply.json;
      expect(error).toMatchObject({ error: 'validation_error', field: path === batchPath ? 'records.0.witness_sig' : 'witness_sig' });
    }
    expect(rows()).toBe(before);
  });

  it('is stored with its form, and (open policy) stays witnessed though it binds neither system nor tool', async () => {
    const record = legacySigned(attestation({ input_hash: 'e'.repeat(64) }));
    const moved = { ...record, tool_name: 'renamed', system_name: 'elsewhere', model_id: 'm', authorised_by: { identity: 'x@example.com' } };
    const reply = await call(server, 'POST', externalPath, { body: moved });
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject({ trust_tier: 'witnessed', detail: 'ok' });
    const row = (await storedRow<Record<string, string>>(
      server.dbPath,
      'SELECT witness_form, key_fingerprint, record FROM attestations WHERE attestation_id = ?',
      [reply.json.attestation_id],
    ))!;
    expect(row.witness_form).toBe('legacy');
    expect(row.record).toBe(canonicalize(moved));
    expect(row.key_fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });
});
