import { Database } from '../../src/server/store/sqlite/driver.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServiceApi } from '../../src/client/api.js';
import { GovernanceClient } from '../../src/client/client.js';
import { NetworkError, ServerError } from '../../src/client/errors.js';
import { DERIVED_KEY_PREFIX, idempotencyKeyFor } from '../../src/client/idempotency.js';
import { DEFAULT_RETRY_POLICY, decideFailureRetry } from '../../src/client/retry.js';
import type { Transport, TransportRequest } from '../../src/client/transport.js';
import { sha256Hex } from '../../src/core/hashing.js';
import { startInProcess, type InProcess } from '../helpers/in-process-service.js';
import { evidenceRecord } from '../helpers/service-requests.js';

const now = new Date('2026-01-01T00:00:00Z');

describe('retry rule 4: an idempotent write is retried once after a 5xx, a network error or a timeout', () => {
  it('retries a network error or timeout once, after the default wait', () => {
    expect(decideFailureRetry(1, { kind: 'network-error' }, true, DEFAULT_RETRY_POLICY, now)).toEqual({ retry: true, waitMs: 1000 });
  });
  it('retries a 5xx once; a 503 waits for its Retry-After, capped', () => {
    for (const status of [500, 502, 504])
      expect(decideFailureRetry(1, { kind: 'response', status }, true, DEFAULT_RETRY_POLICY, now)).toEqual({ retry: true, waitMs: 1000 });
    expect(decideFailureRetry(1, { kind: 'response', status: 503, retryAfter: '7' }, true, DEFAULT_RETRY_POLICY, now)).toEqual({ retry: true, waitMs: 7000 });
    expect(decideFailureRetry(1, { kind: 'response', status: 503, retryAfter: '3600' }, true, DEFAULT_RETRY_POLICY, now)).toEqual({
      retry: true,
      waitMs: 60_000,
    });
  });
  it('retries only once', () => {
    expect(decideFailureRetry(2, { kind: 'network-error' }, true, DEFAULT_RETRY_POLICY, now)).toEqual({ retry: false });
    expect(decideFailureRetry(2, { kind: 'response', status: 500 }, true, DEFAULT_RETRY_POLICY, now)).toEqual({ retry: false });
  });
  it('never retries a write without an idempotency key', () => {
    expect(decideFailureRetry(1, { kind: 'network-error' }, false, DEFAULT_RETRY_POLICY, now)).toEqual({ retry: false });
    expect(decideFailureRetry(1, { kind: 'response', status: 500 }, false, DEFAULT_RETRY_POLICY, now)).toEqual({ retry: false });
  });
  it('never retries a 4xx or a 2xx by this rule', () => {
    for (const status of [200, 400, 401, 404, 413, 422])
      expect(decideFailureRetry(1, { kind: 'response', status }, true, DEFAULT_RETRY_POLICY, now)).toEqual({ retry: false });
  });
});

describe('derived idempotency keys', () => {
  it('are the prefixed hex SHA-256 of the canonical JSON of the record, its key member left out', () => {
    const record = { b: 1, a: 'x', idempotency_key: 'ignored' };
    // canonical JSON written by hand (RFC 8785: members sorted, no whitespace)
    expect(idempotencyKeyFor(record)).toBe(DERIVED_KEY_PREFIX + sha256Hex('{"a":"x","b":1}'));
  });
});

let service: InProcess;
beforeEach(async () => {
  service = await startInProcess();
});
afterEach(async () => {
  await service.close();
});

/**
 * A transport into the in-process service whose first write reply is lost after the service has
 * committed it (as a client timeout after a slow commit): the caller sees a timeout.
 */
function losingFirstReply(lose = 1): Transport & { writes: number } {
  const transport = {
    writes: 0,
    async request(req: TransportRequest) {
      const reply = await service.service.app.inject({
        method: req.method,
        url: req.path,
        headers: req.headers,
        ...(req.body !== undefined ? { payload: req.body } : {}),
      });
      if (req.method === 'POST' && ++transport.writes <= lose)
        throw new NetworkError('timeout', `${req.method} ${req.path}: no reply within 15 s (the client timeout)`, { timedOut: true });
      return { status: reply.statusCode, headers: reply.headers as Record<string, string>, body: reply.body };
    },
  };
  return transport;
}

function storedCount(table = 'evidence'): number {
  const db = new Database(service.dbPath, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('a client retry after a timeout whose write did land', () => {
  it('stores exactly one record, and the client gets its id', async () => {
    const transport = losingFirstReply();
    const waits: number[] = [];
    const client = new GovernanceClient({
      apiKey: service.apiKey,
      workspaceId: service.workspaceId,
      systemName: 'chatbot',
      transport,
      onError: 'raise',
      flushOnExit: false,
      sleep: async (ms) => void waits.push(ms),
    });
    const result = await client.changeEvent({
      changeKind: 'deployment',
      actor: 'ci@example.com',
      summary: 'release 7',
      environment: 'production',
      system: 'chatbot',
    });
    await client.close();
    expect(transport.writes).toBe(2);
    expect(waits).toEqual([1000]);
    expect(storedCount()).toBe(1);
    const db = new Database(service.dbPath, { readonly: true });
    const stored = db.prepare('SELECT record_id FROM evidence').pluck().get();
    db.close();
    expect(result.recordId).toBe(stored);
    // the retry was answered from the key: the result says so
    expect(result.replayed).toBe(true);
  });

  it('says when the same record sent again was answered from its key, not stored again', async () => {
    const transport = losingFirstReply(0); // every reply arrives
    const client = new GovernanceClient({
      apiKey: service.apiKey,
      workspaceId: service.workspaceId,
      systemName: 'chatbot',
      transport,
      onError: 'raise',
      flushOnExit: false,
    });
    const input = {
      changeKind: 'deployment',
      actor: 'ci@example.com',
      summary: 'release 9',
      environment: 'production',
      system: 'chatbot',
      occurredAt: '2026-11-24T12:00:00Z',
    } as const;
    const first = await client.changeEvent(input);
    const again = await client.changeEvent(input);
    await client.close();
    expect(first.replayed).toBeUndefined();
    expect(again).toMatchObject({ recordId: first.recordId, replayed: true });
    expect(storedCount()).toBe(1);
  });

  it('stores one attestation when push is retried after a lost reply', async () => {
    const transport = losingFirstReply();
    const client = new GovernanceClient({
      apiKey: service.apiKey,
      workspaceId: service.workspaceId,
      systemName: 'chatbot',
      transport,
      onError: 'raise',
      flushOnExit: false,
      sleep: async () => {},
    });
    const result = await client.push({ toolName: 'search', inputHash: 'a'.repeat(64), outputHash: 'b'.repeat(64) });
    await client.close();
    expect(result.attestationId).toMatch(/^att_/);
    expect(storedCount('attestations')).toBe(1);
  });

  it("with idempotency off, the write is not retried (the timeout is the caller's)", async () => {
    const transport = losingFirstReply();
    const client = new GovernanceClient({
      apiKey: service.apiKey,
      workspaceId: service.workspaceId,
      systemName: 'chatbot',
      transport,
      onError: 'raise',
      flushOnExit: false,
      idempotency: false,
      sleep: async () => {},
    });
    await expect(
      client.changeEvent({ changeKind: 'deployment', actor: 'ci@example.com', summary: 'release 8', environment: 'production', system: 'chatbot' }),
    ).rejects.toThrow(NetworkError);
    await client.close();
    expect(transport.writes).toBe(1);
    expect(storedCount()).toBe(1);
  });

  it('the API retries a keyed write after a 500 once, and gives up after the second', async () => {
    let posts = 0;
    const transport: Transport = {
      async request() {
        posts++;
        return { status: 500, headers: {}, body: '{"error":"server_error","message":"boom"}' };
      },
    };
    const api = createServiceApi({ transport, apiKey: 'k', workspaceId: 'ws', sleep: async () => {} });
    await expect(api.postEvidence(evidenceRecord(), { idempotencyKey: 'k1' })).rejects.toThrow(ServerError);
    expect(posts).toBe(2);
    posts = 0;
    await expect(api.postEvidence(evidenceRecord())).rejects.toThrow(ServerError);
    expect(posts).toBe(1);
  });
});

describe('waits a bulk caller controls', () => {
  it('a wait before a retry ends as soon as the signal aborts', async () => {
    const { defaultSleep } = await import('../../src/client/retry.js');
    const controller = new AbortController();
    const waiting = defaultSleep(60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
  });

  it('a call may wait on 429 as often as it says, and is told each wait and why', async () => {
    let calls = 0;
    const transport: Transport = {
      async request() {
        calls++;
        return calls <= 3
          ? { status: 429, headers: { 'retry-after': String(20 + calls) }, body: '{"error":"rate_limited","message":"slow down"}' }
          : { status: 200, headers: {}, body: '{"accepted":0,"rejected":0,"results":[]}' };
      },
    };
    const slept: number[] = [];
    const told: [number, string][] = [];
    const api = createServiceApi({ transport, apiKey: 'k', workspaceId: 'ws', sleep: async (ms) => void slept.push(ms) });
    await api.postEvidenceBatch([], { rateLimitRetries: Number.POSITIVE_INFINITY, onWait: (ms, why) => told.push([ms, why]) });
    expect(slept).toEqual([21_000, 22_000, 23_000]);
    expect(told).toEqual([
      [21_000, 'rate_limited'],
      [22_000, 'rate_limited'],
      [23_000, 'rate_limited'],
    ]);
  });
});
