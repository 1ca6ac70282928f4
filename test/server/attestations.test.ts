import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize, legacyWitnessMessage, parseJsonLossless, SigningKey, signWitness, stringifyJson, type JsonValue } from '../../src/core/index.js';
import { BATCH_BODY_LIMIT } from '../../src/server/json-body.js';
import { MAX_BATCH_SIZE } from '../../src/server/routes/attestations.js';
import { storedRow as readStoredRow } from '../helpers/backend.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { attestation, call, wsPath } from '../helpers/service-requests.js';

let server: TestServer;
let externalPath: string;
let batchPath: string;
const key = SigningKey.fromHex('33'.repeat(32));

/** The service's clock: a whole second near the real time, which it stays at. */
const NOW = new Date(Math.floor(Date.now() / 1000) * 1000);

beforeAll(async () => {
  server = await startTestServer({ now: () => NOW });
  externalPath = wsPath(server.workspaceId, 'attestations/external');
  batchPath = wsPath(server.workspaceId, 'attestations/batch');
});
afterAll(async () => {
  await server.stop();
});

function signed(record: Record<string, unknown>, workspaceId = server.workspaceId): Record<string, unknown> {
  return { ...record, ...signWitness(record, workspaceId, key) };
}

function legacySigned(record: Record<string, unknown>): Record<string, unknown> {
  return { ...record, witness_sig: key.ed25519SignHex(legacyWitnessMessage(record)), verifying_key_hex: key.publicKeyHex };
}

async function storedRow(
  attestationId: string,
): Promise<{ record: string; witness_form: string | null; trust_tier: string; agent_name: string; executed_at: string }> {
  return (await readStoredRow(server.dbPath, 'SELECT record, witness_form, trust_tier, agent_name, executed_at FROM attestations WHERE attestation_id = ?', [
    attestationId,
  ])) as never;
}

describe('POST attestations/external', () => {
  it('accepts an unsigned attestation as declared, not externally verified', async () => {
    const reply = await call(server, 'POST', externalPath, { body: attestation() });
    expect(reply.status).toBe(201);
    expect(Object.keys(reply.json).sort()).toEqual(['attestation_id', 'detail', 'external_verified', 'ledger_index', 'trust_tier']);
    expect(reply.json.attestation_id).toMatch(/^att_[0-9a-f-]{36}$/);
    expect(reply.json).toMatchObject({ external_verified: false, trust_tier: 'declared', detail: 'ok' });
    expect((await storedRow(reply.json.attestation_id)).witness_form).toBeNull();
  });

  it('verifies a witness_sig over the canonical message: witnessed and externally verified', async () => {
    const record = signed(attestation({ model_id: 'gpt-x', authorised_by: { identity: 'ops@example.com', role: 'approver', session_id: 's-1' } }));
    const reply = await call(server, 'POST', externalPath, { body: record });
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject({ external_verified: true, trust_tier: 'witnessed', detail: 'ok' });
    const row = await storedRow(reply.json.attestation_id);
    expect(row.witness_form).toBe('canonical');
    expect(row.trust_tier).toBe('witnessed');
    expect(row.record).toBe(canonicalize(record));
  });

  it('verifies a witness_sig over the legacy message and records that form', async () => {
    const reply = await call(server, 'POST', externalPath, { body: legacySigned(attestation()) });
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject({ external_verified: true, trust_tier: 'witnessed' });
    expect((await storedRow(reply.json.attestation_id)).witness_form).toBe('legacy');
  });

  it('answers 422 on witness_sig for a signature that does not verify, and stores nothing', async () => {
    const record = signed(attestation());
    const cases = [
      { ...record, tool_name: 'tampered' },
      signed(attestation(), 'ws_someone_else'),
      { ...record, witness_sig: '00'.repeat(64) },
      { ...record, verifying_key_hex: SigningKey.fromHex('44'.repeat(32)).publicKeyHex },
    ];
    for (const body of cases) {
      const reply = await call(server, 'POST', externalPath, { body });
      expect(reply.status).toBe(422);
      expect(reply.json).toMatchObject({ error: 'validation_error', field: 'witness_sig' });
    }
    const tampered = (await readStoredRow<{ n: number }>(server.dbPath, "SELECT count(*) AS n FROM attestations WHERE tool_name = 'tampered'"))!;
    expect(tampered.n).toBe(0);
  });

  it('refuses the identity key with a trivial signature, which "verifies" any message by the group equation alone', async () => {
    // R = identity and S = 0 with A = identity satisfy [S]B = R + [k]A for every message: a
    // small-order key proves nothing, and would otherwise earn the witnessed tier without a secret.
    const identity = '01'.padEnd(64, '0');
    for (const path of [externalPath, batchPath]) {
      const forged = { ...attestation(), witness_sig: identity + '00'.repeat(32), verifying_key_hex: identity };
      const reply = await call(server, 'POST', path, { body: path === batchPath ? { records: [forged] } : forged });
      if (path === externalPath) expect(reply.json).toMatchObject({ error: 'validation_error', field: 'witness_sig' });
      else expect(reply.json).toMatchObject({ accepted: 0, rejected: 1, results: [{ index: 0, status: 'rejected', field: 'records.0.witness_sig' }] });
    }
  });

  it('keeps the attestation as sent, numbers and all, so that the signature still verifies from storage', async () => {
    const text = stringifyJson({ ...attestation({ tool_name: 'calc' }), extra: parseJsonLossless('{"ratio":1.0,"big":98765432109876543210,"name":"naïve"}') });
    const record = parseJsonLossless(text) as { [k: string]: JsonValue };
    const body = stringifyJson({ ...record, ...signWitness(record, server.workspaceId, key) });
    const reply = await call(server, 'POST', externalPath, { body });
    expect(reply.json.trust_tier).toBe('witnessed');
    const stored = (await storedRow(reply.json.attestation_id)).record;
    expect(stored).toContain('"ratio":1.0');
    expect(stored).toContain('"big":98765432109876543210');
    expect(stored).toBe(canonicalize(parseJsonLossless(body)));
  });

  it('defaults agent_name to the system name and executed_at to the time of ingest', async () => {
    const { agent_name: _a, executed_at: _e, ...record } = attestation({ system_name: 'defaults' });
    const reply = await call(server, 'POST', externalPath, { body: record });
    expect(reply.status).toBe(201);
    const row = await storedRow(reply.json.attestation_id);
    expect(row.agent_name).toBe('defaults');
    expect(Date.parse(row.executed_at)).toBe(NOW.getTime());
  });

  it('answers 422 with the dotted field of the first problem', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ system_name: undefined }, 'system_name'],
      [{ tool_name: '' }, 'tool_name'],
      [{ input_hash: 'abc' }, 'input_hash'],
      [{ output_hash: undefined }, 'output_hash'],
      [{ schema_version: 3 }, 'schema_version'],
      [{ executed_at: 'now' }, 'executed_at'],
      [{ authorised_by: 'me' }, 'authorised_by'],
      [{ authorised_by: { role: 'x' } }, 'authorised_by.identity'],
      [{ witness_sig: 'ab'.repeat(64) }, 'verifying_key_hex'],
      [{ witness_sig: 'short', verifying_key_hex: 'ab'.repeat(32) }, 'witness_sig'],
      // kept in their own columns: refused on every backend alike (PostgreSQL's text cannot hold U+0000)
      [{ tool_name: 'search\u0000x' }, 'tool_name'],
      [{ agent_name: '\u0000' }, 'agent_name'],
    ];
    for (const [overrides, field] of cases) {
      const body = attestation(overrides);
      for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
      const reply = await call(server, 'POST', externalPath, { body });
      expect(reply.status, field).toBe(422);
      expect(reply.json.field, field).toBe(field);
    }
  });
});

describe('POST attestations/batch', () => {
  it('accepts the good items and rejects the bad ones, each with its own result', async () => {
    const records = [
      attestation(),
      signed(attestation({ tool_name: 'signed' })),
      { ...signed(attestation()), tool_name: 'tampered' },
      attestation({ input_hash: 'nope' }),
      legacySigned(attestation({ tool_name: 'legacy' })),
      'not an object',
    ];
    const reply = await call(server, 'POST', batchPath, { body: { records } });
    expect(reply.status).toBe(200);
    expect(reply.json.accepted).toBe(3);
    expect(reply.json.rejected).toBe(3);
    const results = reply.json.results;
    expect(results.map((r: { status: string }) => r.status)).toEqual(['accepted', 'accepted', 'rejected', 'rejected', 'accepted', 'rejected']);
    expect(results.map((r: { index: number }) => r.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(results[0]).toMatchObject({ status: 'accepted', trust_tier: 'declared', external_verified: false });
    expect(results[0].attestation_id).toMatch(/^att_/);
    expect(results[1]).toMatchObject({ status: 'accepted', trust_tier: 'witnessed', external_verified: true });
    expect(results[2]).toMatchObject({ status: 'rejected', error: 'validation_error', field: 'records.2.witness_sig' });
    expect(results[3]).toMatchObject({ status: 'rejected', error: 'validation_error', field: 'records.3.input_hash' });
    expect(typeof results[3].message).toBe('string');
    expect(results[5]).toMatchObject({ status: 'rejected', error: 'validation_error', field: 'records.5' });
    expect((await storedRow(results[4].attestation_id)).witness_form).toBe('legacy');
    expect(await storedRow(results[0].attestation_id)).toBeDefined();
  });

  it(`takes up to ${MAX_BATCH_SIZE} attestations and refuses more with 422 on records`, async () => {
    const full = Array.from({ length: MAX_BATCH_SIZE }, (_, i) => attestation({ tool_name: `t${i}` }));
    const ok = await call(server, 'POST', batchPath, { body: { records: full } });
    expect(ok.status).toBe(200);
    expect(ok.json.accepted).toBe(MAX_BATCH_SIZE);
    const tooMany = await call(server, 'POST', batchPath, { body: { records: [...full, attestation()] } });
    expect(tooMany.status).toBe(422);
    expect(tooMany.json).toMatchObject({ error: 'validation_error', field: 'records' });
  });

  it('answers 413 for a batch body over 8 MiB', async () => {
    const reply = await call(server, 'POST', batchPath, { body: { records: [attestation({ model_id: 'x'.repeat(BATCH_BODY_LIMIT) })] } });
    expect(reply.status).toBe(413);
    expect(reply.json.error).toBe('payload_too_large');
  });

  it('answers 422 on records when it is missing or not an array, and an empty batch accepts nothing', async () => {
    for (const body of [{}, { records: {} }, { records: 'x' }]) {
      const reply = await call(server, 'POST', batchPath, { body });
      expect(reply.status).toBe(422);
      expect(reply.json.field).toBe('records');
    }
    const empty = await call(server, 'POST', batchPath, { body: { records: [] } });
    expect(empty.json).toEqual({ accepted: 0, rejected: 0, results: [] });
  });
});
