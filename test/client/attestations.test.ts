import { describe, expect, it } from 'vitest';
import * as ed from '@noble/ed25519';
import { NetworkError, ServerError, ValidationError } from '../../src/client/errors.js';
import { hashValue } from '../../src/core/hashing.js';
import { serviceLikeHandler, type RecordedRequest } from '../helpers/fault-server.js';
import { useClientHarness } from './fixtures/client-harness.js';
import { simpleCanonical } from './fixtures/record-inputs.js';

const API_KEY = 'gk_test_attestations_0001';
const KEY_HEX = '9c'.repeat(16) + '0123456789abcdef'.repeat(2);
const WS = 'ws_attest';
const SYSTEM = 'support-agent';
const H_IN = 'a'.repeat(64);
const H_OUT = 'b'.repeat(64);

const harness = useClientHarness({ apiKey: API_KEY, signingKeyHex: KEY_HEX, workspaceId: WS, systemName: SYSTEM, closeMayFail: true });

type Attestation = Record<string, unknown>;
const isSingle = (request: RecordedRequest) => request.url.endsWith('/attestations/external');
const isBatch = (request: RecordedRequest) => request.url.endsWith('/attestations/batch');
const singles = () => harness.server.requests.filter(isSingle).map((request) => JSON.parse(request.body) as Attestation);
const batches = () => harness.server.requests.filter(isBatch).map((request) => (JSON.parse(request.body) as { records: Attestation[] }).records);

/** witness_sig checked with an independent Ed25519 implementation over an independently built message (docs/wire-format.md). */
async function expectWitnessed(record: Attestation, workspaceId = WS): Promise<void> {
  // The batch item's idempotency_key is not part of the attestation (the service takes it off).
  const { witness_sig, verifying_key_hex, idempotency_key: _key, ...signed } = record;
  expect(typeof witness_sig).toBe('string');
  expect(verifying_key_hex).toBe(Buffer.from(await ed.getPublicKeyAsync(KEY_HEX)).toString('hex'));
  const message = new TextEncoder().encode(simpleCanonical({ ...signed, workspace_id: workspaceId }));
  expect(await ed.verifyAsync(witness_sig as string, message, verifying_key_hex as string)).toBe(true);
}

describe('push', () => {
  it('sends the attestation of docs/wire-format.md "Attestations", signed, and returns the result in camelCase', async () => {
    const result = await harness.makeClient({ authorisedBy: { identity: 'ops@example.com', role: 'operator', sessionId: 'sess-1' } }).push({
      toolName: 'refund',
      inputHash: H_IN,
      outputHash: H_OUT,
      executedAt: '2026-02-01T10:00:00.000Z',
      modelId: 'gpt-x',
    });
    expect(result).toEqual({ attestationId: expect.stringMatching(/^att_/), externalVerified: true, trustTier: 'witnessed', detail: 'ok' });
    const [body] = singles();
    const { witness_sig: _sig, verifying_key_hex: _key, ...unsigned } = body;
    expect(unsigned).toEqual({
      system_name: SYSTEM,
      agent_name: SYSTEM,
      tool_name: 'refund',
      input_hash: H_IN,
      output_hash: H_OUT,
      schema_version: 2,
      executed_at: '2026-02-01T10:00:00.000Z',
      model_id: 'gpt-x',
      authorised_by: { identity: 'ops@example.com', role: 'operator', session_id: 'sess-1' },
    });
    await expectWitnessed(body);
  });

  it('defaults executed_at to now and agent_name to the configured agent', async () => {
    const before = Date.now();
    await harness.makeClient({ agentName: 'triage-bot' }).push({ toolName: 'lookup', inputHash: H_IN, outputHash: H_OUT });
    const [body] = singles();
    expect(body.agent_name).toBe('triage-bot');
    expect(Date.parse(body.executed_at as string)).toBeGreaterThanOrEqual(before - 1);
    await expectWitnessed(body);
  });

  it('sends no signature without a key (and the service says declared)', async () => {
    const result = await harness.makeClient({ signingKey: undefined }).push({ toolName: 'lookup', inputHash: H_IN, outputHash: H_OUT });
    expect(result.trustTier).toBe('declared');
    expect(singles()[0]).not.toHaveProperty('witness_sig');
    expect(singles()[0]).not.toHaveProperty('verifying_key_hex');
  });

  it.each(['witnessed', 'declared', 'verified', 'attested', 'observed'] as const)('accepts the trust tier %s', async (tier) => {
    harness.server.setHandler((request) =>
      request.url === '/api/me'
        ? serviceLikeHandler({ workspaceId: WS })(request)
        : { status: 201, body: { attestation_id: 'att_1', external_verified: tier === 'verified', trust_tier: tier, detail: 'ok' } },
    );
    expect((await harness.makeClient().push({ toolName: 't', inputHash: H_IN, outputHash: H_OUT })).trustTier).toBe(tier);
  });

  it('checks the hashes locally and follows onError', async () => {
    const result = await harness.makeClient().push({ toolName: 'lookup', inputHash: 'not-a-hash', outputHash: H_OUT });
    expect(result).toMatchObject({ attestationId: '', externalVerified: false, trustTier: null });
    expect(result.detail).toContain('input_hash');
    expect(result.error).toBeInstanceOf(ValidationError);
    expect(harness.warnings).toHaveLength(1);
    expect(harness.server.count).toBe(0);
    await expect(harness.makeClient({ onError: 'raise' }).push({ toolName: '', inputHash: H_IN, outputHash: H_OUT })).rejects.toBeInstanceOf(ValidationError);
  });

  it('retries a rate-limited attestation once after Retry-After', async () => {
    harness.server.enqueue(
      { body: { user_id: 'u', workspace_id: WS, org_id: 'o' } },
      // 7 s, not the 1 s default wait: the wait asked for must be the one waited
      { status: 429, headers: { 'retry-after': '7' }, body: { error: 'rate_limited', message: 'slow down' } },
    );
    const result = await harness.makeClient().push({ toolName: 'lookup', inputHash: H_IN, outputHash: H_OUT });
    expect(result.attestationId).toMatch(/^att_/);
    const attempts = harness.server.requests.filter(isSingle);
    expect(attempts).toHaveLength(2);
    expect(harness.waits).toEqual([7000]);
    expect(attempts[0].body).toBe(attempts[1].body);
  });

  it('never sends the signing key, and the API key only in the Authorization header', async () => {
    const instance = harness.makeClient();
    await instance.push({ toolName: 'a', inputHash: H_IN, outputHash: H_OUT });
    await instance.batch((b) => b.add({ toolName: 'b', inputHash: H_IN, outputHash: H_OUT }));
    await instance.trace('c', () => 1);
    for (const request of harness.server.requests) {
      expect(request.body.toLowerCase()).not.toContain(KEY_HEX);
      expect(request.body).not.toContain(API_KEY);
      expect(JSON.stringify(request.headers).toLowerCase()).not.toContain(KEY_HEX);
    }
  });
});

describe('wrap', () => {
  it('attests each call of an async function with the hashes of its arguments and result', async () => {
    const instance = harness.makeClient();
    const add = instance.wrap(async function addNumbers(a: number, b: number) {
      return { sum: a + b };
    });
    expect(await add(2, 3)).toEqual({ sum: 5 });
    expect(await add(4, 5)).toEqual({ sum: 9 });
    const bodies = singles();
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toMatchObject({
      tool_name: 'addNumbers',
      input_hash: hashValue([2, 3]),
      output_hash: hashValue({ sum: 5 }),
      schema_version: 2,
      agent_name: SYSTEM,
    });
    expect(bodies[1]).toMatchObject({ input_hash: hashValue([4, 5]), output_hash: hashValue({ sum: 9 }) });
    for (const body of bodies) await expectWitnessed(body);
  });

  it('returns a sync function’s result at once and sends its attestation in the background', async () => {
    const instance = harness.makeClient();
    const upper = instance.wrap((text: string) => text.toUpperCase(), { toolName: 'upper' });
    const result = upper('hello');
    expect(result).toBe('HELLO');
    await instance.flush();
    expect(singles()).toEqual([expect.objectContaining({ tool_name: 'upper', input_hash: hashValue(['hello']), output_hash: hashValue('HELLO') })]);
  });

  it('hashes a sync call’s values when the call returns, not when they are sent', async () => {
    const instance = harness.makeClient();
    const push = instance.wrap((list: number[]) => list, { toolName: 'identity' });
    const list = [1, 2];
    push(list);
    list.push(3);
    await instance.flush();
    expect(singles()[0]).toMatchObject({ input_hash: hashValue([[1, 2]]), output_hash: hashValue([1, 2]) });
  });

  it('rethrows the function’s own errors and attests nothing for that call', async () => {
    const instance = harness.makeClient({ onError: 'raise' });
    const boom = new Error('model failed');
    const failing = instance.wrap(async () => {
      throw boom;
    });
    await expect(failing()).rejects.toBe(boom);
    const failingSync = instance.wrap(() => {
      throw boom;
    });
    expect(() => failingSync()).toThrow(boom);
    await instance.flush();
    expect(singles()).toEqual([]);
  });

  it('under raise, an async call whose attestation fails rejects with the attestation error', async () => {
    harness.server.setHandler((request) =>
      request.url === '/api/me' ? serviceLikeHandler({ workspaceId: WS })(request) : { status: 503, body: { error: 'server_error', message: 'down' } },
    );
    const instance = harness.makeClient({ onError: 'raise' });
    await expect(instance.wrap(async () => 1, { toolName: 't' })()).rejects.toBeInstanceOf(ServerError);
  });

  it('under raise, a sync call’s failed background attestation is thrown by flush', async () => {
    harness.server.setHandler((request) =>
      request.url === '/api/me' ? serviceLikeHandler({ workspaceId: WS })(request) : { status: 503, body: { error: 'server_error', message: 'down' } },
    );
    const instance = harness.makeClient({ onError: 'raise' });
    expect(instance.wrap(() => 1, { toolName: 't' })()).toBe(1);
    await expect(instance.flush()).rejects.toBeInstanceOf(ServerError);
    await expect(instance.flush()).resolves.toMatchObject({ lost: 0 });
  });

  it('under warn, a failed attestation logs and the call still returns its value', async () => {
    harness.server.setHandler((request) =>
      request.url === '/api/me' ? serviceLikeHandler({ workspaceId: WS })(request) : { status: 503, body: { error: 'server_error', message: 'down' } },
    );
    const instance = harness.makeClient();
    expect(await instance.wrap(async () => 'value', { toolName: 't' })()).toBe('value');
    expect(harness.warnings).toHaveLength(1);
    expect(harness.warnings[0]).toContain('attestation of t not stored');
  });

  it('in batch mode puts each call into the buffer', async () => {
    const instance = harness.makeClient();
    const double = instance.wrap((n: number) => n * 2, { toolName: 'double', mode: 'batch' });
    expect(double(1)).toBe(2);
    expect(double(2)).toBe(4);
    expect(instance.buffered).toBe(2);
    expect(harness.server.count).toBe(0);
    await instance.flush();
    const [records] = batches();
    expect(records.map((record) => record.input_hash)).toEqual([hashValue([1]), hashValue([2])]);
    for (const record of records) await expectWitnessed(record);
  });

  it('hashes arguments left undefined as null', async () => {
    const instance = harness.makeClient();
    await instance.wrap(async (a?: number, b?: number) => (a ?? 0) + (b ?? 0), { toolName: 'sum' })(1, undefined);
    expect(singles()[0].input_hash).toBe(hashValue([1, null]));
  });
});

describe('trace', () => {
  it('attests the input and output the callback names, and its model', async () => {
    const instance = harness.makeClient();
    const answer = await instance.trace('answer_question', async (ctx) => {
      ctx.setInput({ question: 'why?' });
      ctx.setModelId('gpt-x-2026');
      ctx.setOutput('because');
      return 'returned';
    });
    expect(answer).toBe('returned');
    const [body] = singles();
    expect(body).toMatchObject({
      tool_name: 'answer_question',
      input_hash: hashValue({ question: 'why?' }),
      output_hash: hashValue('because'),
      model_id: 'gpt-x-2026',
      schema_version: 2,
    });
    await expectWitnessed(body);
  });

  it('uses the return value as output when none is set, and null as input', async () => {
    await harness.makeClient().trace('t', () => [1, 2, 3]);
    expect(singles()[0]).toMatchObject({ input_hash: hashValue(null), output_hash: hashValue([1, 2, 3]) });
  });

  it('rethrows the callback’s error and attests nothing', async () => {
    const instance = harness.makeClient();
    await expect(instance.trace('t', () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(singles()).toEqual([]);
  });
});

describe('batch and the buffer', () => {
  it('batch flushes what was added in one request, signed, and reports it', async () => {
    const instance = harness.makeClient();
    const report = await instance.batch(async (b) => {
      for (let i = 0; i < 3; i++) b.add({ toolName: `tool_${i}`, inputHash: hashValue(i), outputHash: hashValue(i * 2) });
    });
    expect(report).toMatchObject({ sent: 3, accepted: 3, rejected: 0, lost: 0, errors: [] });
    expect(report.results.map((item) => item.status)).toEqual(['accepted', 'accepted', 'accepted']);
    const all = batches();
    expect(all).toHaveLength(1);
    expect(all[0].map((record) => record.tool_name)).toEqual(['tool_0', 'tool_1', 'tool_2']);
    for (const record of all[0]) {
      expect(record).toMatchObject({ schema_version: 2, agent_name: SYSTEM, system_name: SYSTEM });
      await expectWitnessed(record);
    }
  });

  it('reports every record a batch added, including the chunks sent by itself along the way', async () => {
    const instance = harness.makeClient({ batchMaxSize: 2, batchFlushInterval: 60_000 });
    const report = await instance.batch(async (b) => {
      for (let i = 0; i < 5; i++) b.add({ toolName: `tool_${i}`, inputHash: hashValue(i), outputHash: hashValue(i + 1) });
    });
    expect(batches().map((records) => records.length)).toEqual([2, 2, 1]);
    expect(report).toMatchObject({ sent: 5, accepted: 5, rejected: 0, lost: 0, errors: [] });
    expect(report.results).toHaveLength(5);
  });

  it('flushes by itself when batchMaxSize records are buffered', async () => {
    const instance = harness.makeClient({ batchMaxSize: 3, batchFlushInterval: 60_000 });
    const tick = instance.wrap((n: number) => n, { toolName: 'tick', mode: 'batch' });
    for (let i = 0; i < 7; i++) tick(i);
    await expect.poll(() => batches().length).toBe(2);
    expect(batches().map((records) => records.length)).toEqual([3, 3]);
    expect(instance.buffered).toBe(1);
    await instance.close();
    expect(batches().map((records) => records.length)).toEqual([3, 3, 1]);
  });

  // When the interval ends is the buffer's to decide (test/client/batch-buffer.test.ts, with a
  // manual timer); here: the client arms it with batchFlushInterval, and each flush sends what waited.
  it('flushes by itself every batchFlushInterval ms', async () => {
    const instance = harness.makeClient({ batchFlushInterval: 20 });
    const tick = instance.wrap((n: number) => n, { toolName: 'tick', mode: 'batch' });
    tick(1);
    tick(2);
    expect(instance.buffered).toBe(2);
    await expect.poll(() => batches().length, { timeout: 5000 }).toBe(1);
    expect(batches()[0]).toHaveLength(2);
    tick(3);
    await expect.poll(() => batches().length, { timeout: 5000 }).toBe(2);
  });

  it('sends what flush finds in chunks of batchMaxSize', async () => {
    const instance = harness.makeClient({ batchMaxSize: 100 });
    await instance.batch((b) => {
      for (let i = 0; i < 250; i++) b.add({ toolName: 'bulk', inputHash: hashValue(i), outputHash: H_OUT });
    });
    await instance.flush();
    const sizes = batches().map((records) => records.length);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(250);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(100);
  });

  it('close flushes the buffer and shutdown is the same', async () => {
    const instance = harness.makeClient();
    instance.wrap((n: number) => n, { toolName: 'tick', mode: 'batch' })(1);
    const report = await instance.shutdown();
    expect(report.accepted).toBe(1);
    expect(batches()).toHaveLength(1);
    expect(await instance.close()).toBe(report);
  });

  it('under warn, a failed flush reports how many records were lost and why', async () => {
    harness.server.setHandler((request) =>
      request.url === '/api/me' ? serviceLikeHandler({ workspaceId: WS })(request) : { status: 502, body: { error: 'server_error', message: 'bad gateway' } },
    );
    const instance = harness.makeClient();
    const report = await instance.batch((b) => {
      b.add({ toolName: 'a', inputHash: H_IN, outputHash: H_OUT });
      b.add({ toolName: 'b', inputHash: H_IN, outputHash: H_OUT });
    });
    expect(report).toMatchObject({ sent: 0, lost: 2 });
    expect(harness.warnings).toHaveLength(1);
    expect(harness.warnings[0]).toMatch(/^2 buffered attestations were not delivered and are lost: .*502/);
  });

  it('under raise, a failed flush throws the typed error with the count', async () => {
    harness.server.setHandler((request) =>
      request.url === '/api/me' ? serviceLikeHandler({ workspaceId: WS })(request) : { status: 500, body: { error: 'server_error', message: 'boom' } },
    );
    const instance = harness.makeClient({ onError: 'raise' });
    const error = await instance.batch((b) => b.add({ toolName: 'a', inputHash: H_IN, outputHash: H_OUT })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as Error).message).toContain('1 buffered attestation was not delivered');
  });

  it('reports items the service rejected', async () => {
    harness.server.setHandler((request) =>
      request.url === '/api/me'
        ? serviceLikeHandler({ workspaceId: WS })(request)
        : {
            body: {
              accepted: 1,
              rejected: 1,
              results: [
                { status: 'accepted', attestation_id: 'att_1' },
                { status: 'rejected', error: 'validation_error', message: 'bad hash', field: 'records.1.input_hash' },
              ],
            },
          },
    );
    const instance = harness.makeClient();
    const report = await instance.batch((b) => {
      b.add({ toolName: 'a', inputHash: H_IN, outputHash: H_OUT });
      b.add({ toolName: 'b', inputHash: H_IN, outputHash: H_OUT });
    });
    expect(report).toMatchObject({ accepted: 1, rejected: 1, lost: 0 });
    expect(report.results[1]).toEqual({ status: 'rejected', attestationId: '', reason: 'records.1.input_hash: bad hash' });
    expect(harness.warnings).toEqual(['the service rejected 1 of 2 attestations: records.1.input_hash: bad hash']);
  });

  it('reports every record of failing flushes as lost exactly once', async () => {
    let batchCalls = 0;
    harness.server.setHandler((request) => {
      if (request.url === '/api/me') return serviceLikeHandler({ workspaceId: WS })(request);
      batchCalls += 1;
      return { status: 503, body: { error: 'server_error', message: 'down' } };
    });
    const instance = harness.makeClient({ batchMaxSize: 2, batchFlushInterval: 60_000 });
    const report = await instance.batch((b) => {
      for (let i = 0; i < 5; i++) b.add({ toolName: 't', inputHash: H_IN, outputHash: H_OUT });
    });
    await instance.flush();
    // Automatic flushes at 2 and 4 records fail (reported in the background), then the last record's;
    // each is sent twice, since keyed batches are retried once after a 5xx (retry.ts rule 4).
    expect(batchCalls).toBe(6);
    // the batch's report counts them all; the warnings said each once
    expect(report.lost).toBe(5);
    const lost = harness.warnings.map((warning) => Number(/^(\d+) buffered/.exec(warning)?.[1] ?? 0)).reduce((a, b) => a + b, 0);
    expect(lost).toBe(5);
  });
});

describe('at process exit', () => {
  const failingBatches = () =>
    harness.server.setHandler((request) =>
      request.url === '/api/me' ? serviceLikeHandler({ workspaceId: WS })(request) : { status: 503, body: { error: 'server_error', message: 'maintenance' } },
    );

  it('registers one beforeExit listener per client, only once something is buffered, and removes it on close', async () => {
    const before = process.listenerCount('beforeExit');
    const instance = harness.makeClient({ flushOnExit: true });
    expect(process.listenerCount('beforeExit')).toBe(before);
    const tick = instance.wrap((n: number) => n, { toolName: 'tick', mode: 'batch' });
    tick(1);
    tick(2);
    tick(3);
    expect(process.listenerCount('beforeExit')).toBe(before + 1);
    await instance.close();
    expect(process.listenerCount('beforeExit')).toBe(before);
  });

  it('the exit handler flushes what is buffered', async () => {
    const instance = harness.makeClient({ flushOnExit: true });
    instance.wrap((n: number) => n, { toolName: 'tick', mode: 'batch' })(1);
    await instance.handleBeforeExit();
    expect(batches()).toHaveLength(1);
    expect(harness.warnings).toEqual([]);
  });

  it('the exit handler reports how many records were lost and why', async () => {
    failingBatches();
    const instance = harness.makeClient({ flushOnExit: true });
    const tick = instance.wrap((n: number) => n, { toolName: 'tick', mode: 'batch' });
    tick(1);
    tick(2);
    tick(3);
    await instance.handleBeforeExit();
    expect(harness.warnings).toHaveLength(1);
    expect(harness.warnings[0]).toMatch(/^at exit: 3 buffered attestations were not delivered and are lost: .*503.*maintenance/);
    await instance.handleBeforeExit(); // nothing left: says nothing more
    expect(harness.warnings).toHaveLength(1);
  });

  it('the exit handler reports under raise too (it cannot throw), and says nothing under silent', async () => {
    failingBatches();
    const raising = harness.makeClient({ flushOnExit: true, onError: 'raise' });
    raising.wrap((n: number) => n, { toolName: 'tick', mode: 'batch' })(1);
    await raising.handleBeforeExit();
    expect(harness.warnings).toHaveLength(1);
    await raising.close();
    const silent = harness.makeClient({ flushOnExit: true, onError: 'silent' });
    silent.wrap((n: number) => n, { toolName: 'tick', mode: 'batch' })(1);
    await silent.handleBeforeExit();
    expect(harness.warnings).toHaveLength(1);
  });

  it('a timed-out exit flush names the timeout', async () => {
    harness.server.setHandler((request) => (request.url === '/api/me' ? serviceLikeHandler({ workspaceId: WS })(request) : { hang: true }));
    const instance = harness.makeClient({ flushOnExit: true, timeoutMs: 200 });
    instance.wrap((n: number) => n, { toolName: 'tick', mode: 'batch' })(1);
    await instance.handleBeforeExit();
    expect(harness.warnings[0]).toMatch(/1 buffered attestation was not delivered and is lost: .*no reply within/);
    const error = await harness
      .makeClient({ onError: 'raise', timeoutMs: 200 })
      .batch((b) => b.add({ toolName: 't', inputHash: H_IN, outputHash: H_OUT }))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).timedOut).toBe(true);
  });
});
