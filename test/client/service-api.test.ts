import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createServiceApi, type RequestTrace, type ServiceApi } from '../../src/client/api.js';
import {
  ConfigError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  UnauthorizedError,
  ValidationError,
  WORKSPACE_UNRESOLVED_MESSAGE,
} from '../../src/client/errors.js';
import { CLIENT_VERSION } from '../../src/client/version.js';
import { JsonFloat, canonicalize } from '../../src/core/canonical-json.js';
import { startFaultServer, type FaultServer, type ScriptedResponse } from '../helpers/fault-server.js';
import { closedPort } from '../helpers/ports.js';

const API_KEY = 'gk_test_0123456789abcdef';
const WS = 'ws_alpha';
const rateLimited = (retryAfter?: string): ScriptedResponse => ({
  status: 429,
  headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter },
  body: { error: 'rate_limited', message: 'more than 2000 requests per minute' },
});
const gradeResult = { record_id: 'rec_1', record_type: 'model_evaluation', mapped_controls: ['EUAIA_ART15'], detail: 'ok' };

let server: FaultServer;
let api: ServiceApi | undefined;

beforeEach(async () => {
  server = await startFaultServer();
});

afterEach(async () => {
  await api?.close();
  api = undefined;
  await server.close();
});

function makeApi(options: Partial<Parameters<typeof createServiceApi>[0]> = {}): ServiceApi {
  api = createServiceApi({ baseUrl: server.url, apiKey: API_KEY, workspaceId: WS, ...options });
  return api;
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to fail');
}

describe('rate limiting (429)', () => {
  it('waits for Retry-After before the second attempt, and retries exactly once', async () => {
    server.enqueue(rateLimited('1'), { status: 200, body: { gates: [] } });
    // An injected sleep: it records how long it was asked to wait and how many requests the
    // service had seen by then (the second attempt must come after the wait, not before).
    const waits: { ms: number; requestsSeen: number }[] = [];
    await expect(makeApi({ sleep: async (ms) => void waits.push({ ms, requestsSeen: server.count }) }).gatesCheck()).resolves.toEqual({ gates: [] });
    expect(waits).toEqual([{ ms: 1000, requestsSeen: 1 }]);
    expect(server.count).toBe(2);
  });

  it('gives RateLimitedError when the retry is rate limited too', async () => {
    server.enqueue(rateLimited('0'), rateLimited('7'), { status: 200, body: { gates: [] } });
    const error = await failure(makeApi().gatesCheck());
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterMs).toBe(7000);
    expect((error as RateLimitedError).status).toBe(429);
    expect(server.count).toBe(2);
  });

  it('reads Retry-After as an HTTP date', async () => {
    const waits: number[] = [];
    const now = new Date('2026-03-01T12:00:00Z');
    server.enqueue(rateLimited('Sun, 01 Mar 2026 12:00:04 GMT'), { status: 201, body: gradeResult });
    const result = await makeApi({ now: () => now, sleep: async (ms) => void waits.push(ms) }).postEvidence({ record_type: 'model_evaluation' });
    expect(result.record_id).toBe('rec_1');
    expect(waits).toEqual([4000]);
    expect(server.count).toBe(2);
  });

  it('waits 1 s when Retry-After is missing', async () => {
    const waits: number[] = [];
    server.enqueue(rateLimited(), { status: 200, body: { gates: [] } });
    await makeApi({ sleep: async (ms) => void waits.push(ms) }).gatesCheck();
    expect(waits).toEqual([1000]);
  });

  it('caps a long Retry-After at 60 s', async () => {
    const waits: number[] = [];
    server.enqueue(rateLimited('86400'), { status: 200, body: { gates: [] } });
    await makeApi({ sleep: async (ms) => void waits.push(ms) }).gatesCheck();
    expect(waits).toEqual([60_000]);
  });

  it('retries a rate-limited POST with the same body', async () => {
    server.enqueue(rateLimited('0'), { status: 201, body: gradeResult });
    await makeApi().postEvidence({ record_type: 'model_evaluation', payload: { accuracy: new JsonFloat(85) } });
    expect(server.requests[0].body).toBe(server.requests[1].body);
  });
});

describe('failures that are not retried', () => {
  it('does not retry a 500 and throws ServerError', async () => {
    server.enqueue({ status: 500, body: { error: 'server_error', message: 'unexpected server error' } }, { status: 201, body: gradeResult });
    const error = await failure(makeApi().postEvidence({ record_type: 'model_evaluation' }));
    expect(error).toBeInstanceOf(ServerError);
    expect(server.count).toBe(1);
  });

  it('does not retry a 503 without a JSON body', async () => {
    server.enqueue({ status: 503, raw: '<html>upstream down</html>', headers: { 'content-type': 'text/html' } });
    const error = await failure(makeApi().gatesCheck());
    expect(error).toBeInstanceOf(ServerError);
    expect(server.count).toBe(1);
  });

  it('gives NetworkError with timedOut when the reply is slower than the timeout', async () => {
    // The reply would come after 5 s; timedOut says the client's own 300 ms timer ended the wait.
    server.enqueue({ status: 200, body: { gates: [] }, delayMs: 5000 });
    const error = await failure(makeApi({ timeoutMs: 300 }).gatesCheck());
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).timedOut).toBe(true);
    expect((error as NetworkError).code).toBe('timeout');
    expect(server.count).toBe(1);
  });

  it('gives NetworkError (not timed out) when nothing listens', async () => {
    api = createServiceApi({ baseUrl: `http://127.0.0.1:${await closedPort()}`, apiKey: API_KEY, workspaceId: WS });
    const error = await failure(api.gatesCheck());
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).timedOut).toBe(false);
    expect(error.message).not.toContain(API_KEY);
  });

  it('gives NetworkError when the connection drops without a reply', async () => {
    server.enqueue({ destroy: true });
    const error = await failure(makeApi().postEvidence({ record_type: 'model_evaluation' }));
    expect(error).toBeInstanceOf(NetworkError);
    expect(server.count).toBe(1);
  });
});

describe('error replies', () => {
  it.each([401, 403])('%i → UnauthorizedError', async (status) => {
    server.enqueue({ status, body: { error: status === 401 ? 'unauthorized' : 'forbidden', message: 'invalid or expired API key' } });
    const error = await failure(makeApi().postureBrief());
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as UnauthorizedError).status).toBe(status);
    expect(error.message).not.toContain(API_KEY);
  });

  it('422 → ValidationError with the field', async () => {
    server.enqueue({ status: 422, body: { error: 'validation_error', message: 'is required', field: 'payload.risk_level' } });
    const error = await failure(makeApi().postEvidence({ record_type: 'ai_risk_assessment' }));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe('payload.risk_level');
  });

  it('404 → NotFoundError', async () => {
    server.enqueue({ status: 404, body: { error: 'not_found', message: 'workspace not found' } });
    expect(await failure(makeApi().systems())).toBeInstanceOf(NotFoundError);
  });

  it('a 200 with a body that is not JSON → NetworkError', async () => {
    server.enqueue({ status: 200, raw: '{"gates": [' });
    const error = await failure(makeApi().gatesCheck());
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).code).toBe('malformed_response');
    expect((error as NetworkError).timedOut).toBe(false);
  });

  it('a 200 with JSON that is not an object → NetworkError', async () => {
    server.enqueue({ status: 200, raw: '[1,2]' });
    expect(await failure(makeApi().gatesCheck())).toBeInstanceOf(NetworkError);
  });
});

describe('workspace resolution', () => {
  it('asks GET /api/me once and uses its workspace id for every later call', async () => {
    server.setHandler((request) =>
      request.url === '/api/me' ? { body: { user_id: 'usr_1', workspace_id: 'ws_me', org_id: 'org_1' } } : { body: { gates: [] } },
    );
    const service = makeApi({ workspaceId: undefined });
    await Promise.all([service.gatesCheck(), service.gatesCheck()]);
    await service.gatesCheck();
    expect(await service.resolveWorkspaceId()).toBe('ws_me');
    expect(server.requests.map((request) => request.url)).toEqual([
      '/api/me',
      '/api/workspaces/ws_me/governance/grc/gates/check',
      '/api/workspaces/ws_me/governance/grc/gates/check',
      '/api/workspaces/ws_me/governance/grc/gates/check',
    ]);
  });

  it('404 from /api/me → ConfigError with the specification wording', async () => {
    server.enqueue({ status: 404, body: { error: 'not_found', message: 'no such route' } });
    const error = await failure(makeApi({ workspaceId: undefined }).postureBrief());
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe('workspace id is not set and could not be resolved automatically');
    expect(WORKSPACE_UNRESOLVED_MESSAGE).toBe(error.message);
  });

  it('an identity without a workspace id → ConfigError with the specification wording', async () => {
    server.enqueue({ status: 200, body: { user_id: 'usr_1', org_id: 'org_1' } });
    const error = await failure(makeApi({ workspaceId: undefined }).postureBrief());
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(WORKSPACE_UNRESOLVED_MESSAGE);
  });

  it('a rejected key at /api/me stays UnauthorizedError, and the next call asks again', async () => {
    server.enqueue(
      { status: 401, body: { error: 'unauthorized', message: 'invalid API key' } },
      { status: 200, body: { user_id: 'u', workspace_id: 'ws_2', org_id: 'o' } },
    );
    const service = makeApi({ workspaceId: undefined });
    expect(await failure(service.resolveWorkspaceId())).toBeInstanceOf(UnauthorizedError);
    expect(await service.resolveWorkspaceId()).toBe('ws_2');
  });

  it('does not call /api/me when the workspace id is given', async () => {
    server.enqueue({ status: 200, body: { gates: [] } });
    await makeApi().gatesCheck();
    expect(server.requests.map((request) => request.url)).toEqual([`/api/workspaces/${WS}/governance/grc/gates/check`]);
  });
});

describe('requests', () => {
  it('sends the Bearer key, JSON headers and the User-Agent', async () => {
    server.enqueue({ status: 201, body: gradeResult });
    await makeApi().postEvidence({ record_type: 'model_evaluation' });
    const { headers } = server.requests[0];
    expect(headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(headers['content-type']).toBe('application/json');
    expect(headers.accept).toBe('application/json');
    expect(headers['user-agent']).toBe(`govctl/${CLIENT_VERSION}`);
  });

  it('the version in User-Agent is the package version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(CLIENT_VERSION).toBe(pkg.version);
  });

  it('maps each method to its endpoint', async () => {
    server.setHandler(() => ({ status: 200, body: { ok: true } }));
    const service = makeApi();
    await service.me();
    await service.postEvidence({}, { dryRun: true });
    await service.postEvidence({});
    await service.listEvidence({ system_name: 'loan scorer', record_type: 'model_evaluation', days: 30, limit: 200, cursor: 'c1' });
    await service.listEvidence();
    await service.getEvidence('rec_1');
    await service.postAttestation({});
    await service.postAttestationBatch([{ a: 1 }]);
    await service.postureBrief();
    await service.systems('loan-scorer');
    await service.systems();
    await service.gatesCheck();
    await service.deriveControls({ description: 'chatbot', risk_tier: 'limited' });
    const prefix = `/api/workspaces/${WS}/governance`;
    expect(server.requests.map((request) => `${request.method} ${request.url}`)).toEqual([
      'GET /api/me',
      `POST ${prefix}/grc/evidence?dry_run=true`,
      `POST ${prefix}/grc/evidence`,
      `GET ${prefix}/grc/evidence?system_name=loan+scorer&record_type=model_evaluation&days=30&limit=200&cursor=c1`,
      `GET ${prefix}/grc/evidence`,
      `GET ${prefix}/grc/evidence/rec_1`,
      `POST ${prefix}/attestations/external`,
      `POST ${prefix}/attestations/batch`,
      `GET ${prefix}/grc/posture-brief`,
      `GET ${prefix}/grc/systems?name=loan-scorer`,
      `GET ${prefix}/grc/systems`,
      `GET ${prefix}/grc/gates/check`,
      `POST ${prefix}/grc/derive-controls`,
    ]);
    expect(server.requests[7].body).toBe('{"records":[{"a":1}]}');
    expect(server.requests[12].body).toBe('{"description":"chatbot","risk_tier":"limited"}');
    expect(server.requests[0].headers['content-type']).toBeUndefined();
  });

  it('writes request numbers without loss (85.0 stays a float, big integers keep their digits)', async () => {
    server.enqueue({ status: 201, body: gradeResult });
    await makeApi().postEvidence({ payload: { accuracy: new JsonFloat(85), count: 12345678901234567890n, ratio: 0.5, n: 3 } });
    expect(server.requests[0].body).toBe('{"payload":{"accuracy":85.0,"count":12345678901234567890,"ratio":0.5,"n":3}}');
  });

  it('reads reply numbers without loss, so a stored record re-canonicalises to the bytes signed', async () => {
    const stored =
      '{"record_id":"rec_1","record_type":"model_evaluation","system_name":"s","occurred_at":"2026-01-01T00:00:00.000Z","payload":{"accuracy":85.0,"big":12345678901234567890,"tiny":1e-7}}';
    server.enqueue({ status: 200, raw: stored });
    const record = await makeApi().getEvidence('rec_1');
    expect(record.payload.accuracy).toBeInstanceOf(JsonFloat);
    expect(record.payload.big).toBe(12345678901234567890n);
    expect(canonicalize(record.payload)).toBe('{"accuracy":85.0,"big":12345678901234567890,"tiny":1e-07}');
  });

  it('traces each attempt without headers or key', async () => {
    const traces: RequestTrace[] = [];
    server.enqueue(rateLimited('0'), { status: 200, body: { gates: [] } });
    await makeApi({ onRequest: (trace) => traces.push(trace) }).gatesCheck();
    expect(traces.map(({ method, url, status, attempt }) => ({ method, url, status, attempt }))).toEqual([
      { method: 'GET', url: `${server.url}/api/workspaces/${WS}/governance/grc/gates/check`, status: 429, attempt: 1 },
      { method: 'GET', url: `${server.url}/api/workspaces/${WS}/governance/grc/gates/check`, status: 200, attempt: 2 },
    ]);
    for (const trace of traces) expect(trace.durationMs).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(traces)).not.toContain(API_KEY);
  });

  it('traces an attempt that got no reply with its error', async () => {
    const traces: RequestTrace[] = [];
    server.enqueue({ hang: true });
    await failure(makeApi({ onRequest: (trace) => traces.push(trace), timeoutMs: 200 }).gatesCheck());
    expect(traces).toHaveLength(1);
    expect(traces[0].status).toBeUndefined();
    expect(traces[0].error).toContain('no reply within');
  });

  it('refuses to start without an API key or a base URL', () => {
    expect(() => createServiceApi({ baseUrl: server.url, apiKey: '  ' })).toThrow(ConfigError);
    expect(() => createServiceApi({ apiKey: API_KEY })).toThrow(ConfigError);
    expect(() => createServiceApi({ baseUrl: 'ftp://example.com', apiKey: API_KEY })).toThrow(ConfigError);
    expect(() => createServiceApi({ baseUrl: server.url, apiKey: 'two words' })).toThrow(ConfigError);
  });

  it('keeps a path prefix of the base URL', async () => {
    server.enqueue({ status: 200, body: { user_id: 'u', workspace_id: 'w', org_id: 'o' } });
    await makeApi({ baseUrl: `${server.url}/governance/` }).me();
    expect(server.requests[0].url).toBe('/governance/api/me');
  });
});
