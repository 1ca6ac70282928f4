/**
 * The client library against the reference service (a real server on 127.0.0.1 with a real
 * SQLite file): records and attestations go through, signatures verify on the service and again
 * when an auditor fetches the stored record back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GovernanceClient } from '../../src/client/client.js';
import { UnauthorizedError, ValidationError } from '../../src/client/errors.js';
import type { RecordInputs } from '../../src/client/inputs.js';
import { hashValue } from '../../src/core/hashing.js';
import { SigningKey, verifyClientSig, verifyWitness } from '../../src/core/signing/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { VALID_INPUTS } from './fixtures/record-inputs.js';

const KEY_HEX = '5e'.repeat(32);
let service: TestServer;
let client: GovernanceClient;
const warnings: string[] = [];

beforeAll(async () => {
  service = await startTestServer();
  client = new GovernanceClient({
    apiKey: service.apiKey,
    baseUrl: service.url,
    systemName: 'loan-scorer',
    signingKey: KEY_HEX,
    onError: 'raise',
    env: {},
    flushOnExit: false,
    logger: { warn: (message) => warnings.push(message) },
  });
});

afterAll(async () => {
  await client?.close();
  await service?.stop();
});

describe('the client against the reference service', () => {
  it('stores a signed record of every type, and each stored record still verifies', async () => {
    for (const method of Object.keys(VALID_INPUTS) as (keyof RecordInputs)[]) {
      const result = await (client[method] as (input: unknown) => ReturnType<GovernanceClient['record']>).call(client, VALID_INPUTS[method]);
      expect(result.recordId, method).toMatch(/^rec_/);
      expect(result.detail).toBe('ok');
      expect(result.mappedControls.length).toBeGreaterThan(0);
      const stored = await client.api.getEvidence(result.recordId);
      expect(verifyClientSig(stored as never, service.workspaceId, SigningKey.fromHex(KEY_HEX)), method).toBe(true);
    }
    const listed = await client.api.listEvidence({ limit: 200, days: 3650 }); // the incident is dated 2026-02-01
    expect(listed.records).toHaveLength(Object.keys(VALID_INPUTS).length);
    expect(listed.records.every((record) => record.signed)).toBe(true);
  });

  it('runs a dry run without storing', async () => {
    const before = (await client.api.listEvidence({ limit: 200 })).records.length;
    const result = await client.modelEvaluation({ ...VALID_INPUTS.modelEvaluation, dryRun: true });
    expect(result.detail).toBe('dry_run');
    expect(result.recordId).toBe('00000000-0000-0000-0000-000000000000');
    expect((await client.api.listEvidence({ limit: 200 })).records).toHaveLength(before);
  });

  it('pushes a witnessed attestation', async () => {
    const result = await client.push({
      toolName: 'score',
      inputHash: hashValue({ a: 1 }),
      outputHash: hashValue(0.7),
      authorisedBy: { identity: 'ops@example.com', sessionId: 's-1' },
    });
    expect(result).toMatchObject({ attestationId: expect.stringMatching(/^att_/), externalVerified: true, trustTier: 'witnessed', detail: 'ok' });
  });

  it('delivers wrap, trace and batch attestations, all signed', async () => {
    const scored = await client.wrap(async (score: number) => score > 0.5, { toolName: 'decide' })(0.7);
    expect(scored).toBe(true);
    await client.trace('explain', (ctx) => {
      ctx.setInput('why');
      return 'because';
    });
    const report = await client.batch((b) => {
      for (let i = 0; i < 5; i++) b.add({ toolName: 'bulk', inputHash: hashValue(i), outputHash: hashValue(-i) });
    });
    expect(report).toMatchObject({ sent: 5, accepted: 5, rejected: 0, lost: 0 });
    expect(report.results.every((item) => item.attestationId.startsWith('att_'))).toBe(true);
  });

  it('gets a witness signature that verifies the way the service checks it', async () => {
    const api = client.api;
    const record = {
      system_name: 'loan-scorer',
      agent_name: 'loan-scorer',
      tool_name: 't',
      input_hash: 'a'.repeat(64),
      output_hash: 'b'.repeat(64),
      schema_version: 2,
      executed_at: '2026-02-01T10:00:00.000Z',
    };
    const { signWitness } = await import('../../src/core/signing/ed25519.js');
    const signed = { ...record, ...signWitness(record, service.workspaceId, SigningKey.fromHex(KEY_HEX)) };
    expect(verifyWitness(signed, service.workspaceId)).toBe('canonical');
    expect((await api.postAttestation(signed)).trust_tier).toBe('witnessed');
  });

  it('maps the service’s 422 to ValidationError with the field', async () => {
    const error = await client.api
      .postEvidence({ record_type: 'vendor_risk', system_name: 'x', payload: { vendor: 'Acme' } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).status).toBe(422);
    expect((error as ValidationError).field).toMatch(/^payload\./);
  });

  it('maps a wrong key to UnauthorizedError', async () => {
    const stranger = new GovernanceClient({
      apiKey: 'gk_wrong_key_000000000000',
      baseUrl: service.url,
      systemName: 's',
      onError: 'raise',
      env: {},
      flushOnExit: false,
    });
    try {
      await expect(stranger.push({ toolName: 't', inputHash: 'a'.repeat(64), outputHash: 'b'.repeat(64) })).rejects.toBeInstanceOf(UnauthorizedError);
    } finally {
      await stranger.close();
    }
  });

  it('said nothing through the logger', () => {
    expect(warnings).toEqual([]);
  });
});
