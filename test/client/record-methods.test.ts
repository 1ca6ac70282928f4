import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { ConfigError, NetworkError, ServerError, ValidationError, WORKSPACE_UNRESOLVED_MESSAGE } from '../../src/client/errors.js';
import type { RecordInputs } from '../../src/client/inputs.js';
import { CATALOGUE } from '../../src/core/records/catalogue.js';
import { SigningKey, verifyClientSig } from '../../src/core/signing/index.js';
import type { GovernanceClient } from '../../src/client/client.js';
import { serviceLikeHandler } from '../helpers/fault-server.js';
import { useClientHarness } from './fixtures/client-harness.js';
import { EXPECTED, SYSTEM, VALID_INPUTS, simpleCanonical } from './fixtures/record-inputs.js';

const API_KEY = 'gk_test_record_methods_0001';
const KEY_HEX = '4f'.repeat(8) + '1a2b3c4d'.repeat(6);
const WS = 'ws_records';

const harness = useClientHarness({ apiKey: API_KEY, signingKeyHex: KEY_HEX, workspaceId: WS, systemName: SYSTEM });

/** client_sig computed independently: docs/wire-format.md "client_sig" steps 1–4 with node:crypto. */
function expectedClientSig(record: Record<string, unknown>, workspaceId: string): string {
  const message = simpleCanonical({
    occurred_at: record.occurred_at,
    payload: record.payload,
    record_type: record.record_type,
    system_name: record.system_name,
    workspace_id: workspaceId,
  });
  return createHmac('sha256', Buffer.from(KEY_HEX, 'hex')).update(message, 'utf8').digest('hex');
}

const evidenceBodies = () => harness.server.bodies('/api/workspaces/').map((body) => body as Record<string, unknown>);
type Method = keyof RecordInputs;
const METHODS = Object.keys(VALID_INPUTS) as Method[];

describe('one method per record type', () => {
  it('has a method for every type of the catalogue', () => {
    const methods = [...CATALOGUE.values()].map((spec) => spec.method).sort();
    expect(methods).toEqual([...METHODS].sort());
    const instance = harness.makeClient();
    for (const method of methods) expect(typeof (instance as unknown as Record<string, unknown>)[method]).toBe('function');
  });

  it.each(METHODS)('%s builds the wire record of docs/service.md "Record payloads" and returns the result in camelCase', async (method) => {
    const instance = harness.makeClient();
    const call = instance[method] as (input: unknown) => ReturnType<GovernanceClient['record']>;
    const result = await call.call(instance, VALID_INPUTS[method]);
    const expected = EXPECTED[method];
    expect(result).toEqual({ recordId: expect.stringMatching(/^rec_/), recordType: expected.record_type, mappedControls: ['EUAIA_ART9'], detail: 'ok' });
    const [body] = evidenceBodies();
    const { occurred_at, client_sig, client_sig_algo, ...rest } = body;
    expect(rest).toEqual(expected);
    expect(occurred_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);
    expect(client_sig_algo).toBe('hmac-sha256');
    expect(client_sig).toBe(expectedClientSig(body, WS));
  });
});

describe('signing', () => {
  it('resolves the workspace once through /api/me and signs the first record sent after it', async () => {
    const instance = harness.makeClient();
    await instance.modelEvaluation(VALID_INPUTS.modelEvaluation);
    await instance.humanOversight(VALID_INPUTS.humanOversight);
    await instance.vendorRisk(VALID_INPUTS.vendorRisk);
    expect(harness.server.requests.map((request) => request.url)).toEqual([
      '/api/me',
      `/api/workspaces/${WS}/governance/grc/evidence`,
      `/api/workspaces/${WS}/governance/grc/evidence`,
      `/api/workspaces/${WS}/governance/grc/evidence`,
    ]);
    const bodies = evidenceBodies();
    expect(bodies).toHaveLength(3);
    for (const body of bodies) {
      expect(body.client_sig).toBe(expectedClientSig(body, WS));
      expect(verifyClientSig(body as never, WS, SigningKey.fromHex(KEY_HEX))).toBe(true);
    }
  });

  it('shares one /api/me between concurrent first calls, and signs all of them', async () => {
    const instance = harness.makeClient();
    await Promise.all(METHODS.map((method) => (instance[method] as (input: unknown) => Promise<unknown>).call(instance, VALID_INPUTS[method])));
    expect(harness.server.requests.filter((request) => request.url === '/api/me')).toHaveLength(1);
    const bodies = evidenceBodies();
    expect(bodies).toHaveLength(METHODS.length);
    for (const body of bodies) expect(body.client_sig).toBe(expectedClientSig(body, WS));
  });

  it('signs with the configured workspace without asking /api/me', async () => {
    const instance = harness.makeClient({ workspaceId: 'ws_configured' });
    await instance.changeEvent(VALID_INPUTS.changeEvent);
    expect(harness.server.requests.map((request) => request.url)).toEqual(['/api/workspaces/ws_configured/governance/grc/evidence']);
    const [body] = evidenceBodies();
    expect(body.client_sig).toBe(expectedClientSig(body, 'ws_configured'));
  });

  it('sends no signature without a signing key', async () => {
    const instance = harness.makeClient({ signingKey: undefined });
    await instance.accessReview(VALID_INPUTS.accessReview);
    const [body] = evidenceBodies();
    expect(body).not.toHaveProperty('client_sig');
    expect(body).not.toHaveProperty('client_sig_algo');
  });

  it('never sends the signing key, and the API key only in the Authorization header', async () => {
    const instance = harness.makeClient();
    for (const method of METHODS) await (instance[method] as (input: unknown) => Promise<unknown>).call(instance, VALID_INPUTS[method]);
    await instance.modelEvaluation({ ...VALID_INPUTS.modelEvaluation, dryRun: true });
    expect(harness.server.count).toBe(METHODS.length + 2);
    for (const request of harness.server.requests) {
      expect(request.body.toLowerCase()).not.toContain(KEY_HEX);
      expect(request.body).not.toContain(API_KEY);
      expect(JSON.stringify(request.headers).toLowerCase()).not.toContain(KEY_HEX);
      expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    }
  });

  it('takes the key from SERVICE_SIGNING_KEY', async () => {
    const instance = harness.makeClient({ signingKey: undefined, env: { SERVICE_SIGNING_KEY: `${KEY_HEX}\n` } });
    await instance.incidentReport(VALID_INPUTS.incidentReport);
    const [body] = evidenceBodies();
    expect(body.client_sig).toBe(expectedClientSig(body, WS));
  });
});

describe('inputs', () => {
  it('infers human_oversight override from the two decisions', async () => {
    const instance = harness.makeClient();
    await instance.humanOversight({ ...VALID_INPUTS.humanOversight, finalDecision: 'decline' });
    await instance.humanOversight(VALID_INPUTS.humanOversight);
    await instance.humanOversight({ ...VALID_INPUTS.humanOversight, override: false });
    expect(evidenceBodies().map((body) => (body.payload as { override: boolean }).override)).toEqual([false, true, false]);
  });

  it('applies the common overrides and turns Dates into ISO strings', async () => {
    const instance = harness.makeClient();
    await instance.modelEvaluation({
      ...VALID_INPUTS.modelEvaluation,
      occurredAt: new Date('2026-01-31T09:30:00Z'),
      identity: 'someone@example.com',
      resource: 'models/scorer-v3',
      environment: 'staging',
    });
    await instance.vendorRisk({ ...VALID_INPUTS.vendorRisk, lastReviewed: new Date('2026-01-20T15:00:00Z') });
    const [evaluation, vendor] = evidenceBodies();
    expect(evaluation).toMatchObject({
      occurred_at: '2026-01-31T09:30:00.000Z',
      identity: 'someone@example.com',
      resource: 'models/scorer-v3',
      environment: 'staging',
    });
    expect((vendor.payload as { last_reviewed: string }).last_reviewed).toBe('2026-01-20');
  });

  it('sends a dry run with ?dry_run=true and returns its nil id', async () => {
    const result = await harness.makeClient().modelEvaluation({ ...VALID_INPUTS.modelEvaluation, dryRun: true });
    expect(result).toEqual({
      recordId: '00000000-0000-0000-0000-000000000000',
      recordType: 'model_evaluation',
      mappedControls: ['EUAIA_ART9'],
      detail: 'dry_run',
    });
    expect(harness.server.requests.at(-1)!.url).toBe(`/api/workspaces/${WS}/governance/grc/evidence?dry_run=true`);
    expect(evidenceBodies()[0]).not.toHaveProperty('dryRun');
  });

  it('refuses a high risk assessment without an Annex III category, before sending anything', async () => {
    const instance = harness.makeClient({ onError: 'raise' });
    const { annexIiiCategory: _omitted, ...input } = VALID_INPUTS.aiRiskAssessment;
    const error = await instance.aiRiskAssessment(input).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((found) => found.path)).toEqual(['payload.annex_iii_category']);
    expect(harness.server.count).toBe(0);
  });

  it('reports every invalid field at once', async () => {
    const instance = harness.makeClient({ onError: 'raise' });
    const error = (await instance
      .modelEvaluation({ modelName: 'm', datasetName: '', score: 'high' as unknown as number, evaluatedBy: 'x', evaluationType: 'weekly' as 'initial' })
      .catch((caught: unknown) => caught)) as ValidationError;
    expect(error.issues.map((found) => found.path).sort()).toEqual(['payload.accuracy', 'payload.dataset', 'payload.evaluation_type']);
    expect(error.field).toBeDefined();
  });
});

describe('error modes (docs/library.md "Error modes")', () => {
  const failEvidence = () =>
    harness.server.setHandler((request) =>
      request.url === '/api/me'
        ? serviceLikeHandler({ workspaceId: WS })(request)
        : { status: 500, body: { error: 'server_error', message: 'unexpected server error' } },
    );

  it('warn: logs a warning and returns an empty recordId with the reason', async () => {
    failEvidence();
    const result = await harness.makeClient().modelEvaluation(VALID_INPUTS.modelEvaluation);
    expect(result.recordId).toBe('');
    expect(result.recordType).toBe('model_evaluation');
    expect(result.mappedControls).toEqual([]);
    expect(result.detail).toContain('500');
    expect(result.error).toBeInstanceOf(ServerError);
    expect(harness.warnings).toHaveLength(1);
    expect(harness.warnings[0]).toContain('model_evaluation record not stored');
    expect(harness.warnings[0]).not.toContain(API_KEY);
  });

  it('warn is the default', () => {
    expect(harness.makeClient().onError).toBe('warn');
  });

  it('raise: throws the typed error', async () => {
    failEvidence();
    await expect(harness.makeClient({ onError: 'raise' }).modelEvaluation(VALID_INPUTS.modelEvaluation)).rejects.toBeInstanceOf(ServerError);
    expect(harness.warnings).toEqual([]);
  });

  it('silent: returns the empty result and says nothing', async () => {
    failEvidence();
    const result = await harness.makeClient({ onError: 'silent' }).modelEvaluation(VALID_INPUTS.modelEvaluation);
    expect(result.recordId).toBe('');
    expect(result.detail).toContain('500');
    expect(harness.warnings).toEqual([]);
  });

  it('a local validation failure follows onError like any other', async () => {
    const result = await harness.makeClient().trainingDataGovernance({ ...VALID_INPUTS.trainingDataGovernance, recordCount: 1.5 });
    expect(result.recordId).toBe('');
    expect(result.detail).toContain('payload.record_count');
    expect(result.error).toBeInstanceOf(ValidationError);
    expect(harness.warnings).toHaveLength(1);
    expect(harness.server.count).toBe(0);
  });

  it('an unresolvable workspace gives the specification text as detail', async () => {
    harness.server.setHandler(() => ({ status: 404, body: { error: 'not_found', message: 'nothing here' } }));
    const result = await harness.makeClient().modelEvaluation(VALID_INPUTS.modelEvaluation);
    expect(result.recordId).toBe('');
    expect(result.detail).toBe(WORKSPACE_UNRESOLVED_MESSAGE);
    expect(result.error).toBeInstanceOf(ConfigError);
    expect(harness.warnings[0]).toContain(WORKSPACE_UNRESOLVED_MESSAGE);
  });
});

describe('settings', () => {
  it('reads SERVICE_API_KEY, SERVICE_BASE_URL and SERVICE_WORKSPACE_ID', async () => {
    const instance = harness.makeClient({
      apiKey: undefined,
      baseUrl: undefined,
      env: { SERVICE_API_KEY: 'gk_from_env_1234', SERVICE_BASE_URL: harness.server.url, SERVICE_WORKSPACE_ID: 'ws_env' },
    });
    await instance.changeEvent(VALID_INPUTS.changeEvent);
    expect(harness.server.requests.map((request) => [request.url, request.headers.authorization])).toEqual([
      ['/api/workspaces/ws_env/governance/grc/evidence', 'Bearer gk_from_env_1234'],
    ]);
  });

  it('options win over the environment', async () => {
    const instance = harness.makeClient({ workspaceId: 'ws_option', env: { SERVICE_API_KEY: 'gk_from_env_1234', SERVICE_WORKSPACE_ID: 'ws_env' } });
    await instance.changeEvent(VALID_INPUTS.changeEvent);
    expect(harness.server.requests[0].url).toBe('/api/workspaces/ws_option/governance/grc/evidence');
    expect(harness.server.requests[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('has the defaults of the settings table', () => {
    const instance = harness.makeClient();
    expect(instance.agentName).toBe(SYSTEM);
    expect(instance.batchFlushInterval).toBe(30_000);
    expect(instance.batchMaxSize).toBe(100);
  });

  it('refuses to start without an API key or a system name, whatever onError says', () => {
    expect(() => harness.makeClient({ apiKey: undefined, onError: 'silent' })).toThrow(ConfigError);
    expect(() => harness.makeClient({ systemName: '' })).toThrow(ConfigError);
    expect(() => harness.makeClient({ baseUrl: undefined })).toThrow(ConfigError);
    expect(() => harness.makeClient({ onError: 'loud' as 'warn' })).toThrow(ConfigError);
    expect(() => harness.makeClient({ batchMaxSize: 0 })).toThrow(ConfigError);
  });

  it('refuses a malformed signing key without repeating it', () => {
    const bad = 'zz'.repeat(32);
    let error: unknown;
    try {
      harness.makeClient({ signingKey: bad });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('signingKey');
    expect((error as Error).message).not.toContain(bad);
  });

  it('fails record calls after close with client_closed', async () => {
    const instance = harness.makeClient();
    await instance.close();
    const result = await instance.modelEvaluation(VALID_INPUTS.modelEvaluation);
    expect(result.recordId).toBe('');
    expect(result.error?.code).toBe('client_closed');
  });

  it('throws a NetworkError with code client_closed after close under raise, the class the errors table gives it', async () => {
    const instance = harness.makeClient({ onError: 'raise' });
    await instance.close();
    const error = await instance.modelEvaluation(VALID_INPUTS.modelEvaluation).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).code).toBe('client_closed');
  });
});
