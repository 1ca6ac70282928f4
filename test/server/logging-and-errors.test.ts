import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createErrorHandler } from '../../src/server/errors.js';
import { DatabaseUnavailableError } from '../../src/server/store/errors.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { call, evidenceRecord, wsPath } from '../helpers/service-requests.js';

const lines: string[] = [];
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ logLine: (line) => lines.push(line) });
});
afterAll(async () => {
  await server.stop();
});

describe('request log', () => {
  it('writes one JSON line per request with method, path, status, duration and request id, and never a key, a body or a query', async () => {
    lines.length = 0;
    const secretText = 'very-secret-payload-text';
    const reply = await call(server, 'POST', `${wsPath(server.workspaceId, 'grc/evidence')}?dry_run=true`, {
      body: evidenceRecord('change_event', { identity: secretText }),
    });
    await call(server, 'GET', '/api/me', { apiKey: 'gk_not-a-real-key' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(2);
    const [first, second] = lines.map((line) => JSON.parse(line));
    expect(first).toEqual({
      level: 'info',
      time: expect.any(String),
      request_id: reply.headers.get('x-request-id'),
      method: 'POST',
      path: wsPath(server.workspaceId, 'grc/evidence'),
      status: 200,
      duration_ms: expect.any(Number),
    });
    expect(first.request_id).toMatch(/^req_[0-9a-f]{16}$/);
    expect(second).toMatchObject({ method: 'GET', path: '/api/me', status: 401 });
    const all = lines.join('\n');
    for (const secret of [server.apiKey, 'gk_not-a-real-key', secretText, 'dry_run']) expect(all).not.toContain(secret);
  });
});

describe('unexpected errors', () => {
  it('answers 500 server_error with a generic message and logs the cause with the request id', async () => {
    lines.length = 0;
    // Break one store read under the running application.
    const original = server.server.service.store.systems.list.bind(server.server.service.store.systems);
    server.server.service.store.systems.list = () => {
      throw new Error('disk on fire at /var/lib/secret/path');
    };
    try {
      const reply = await call(server, 'GET', wsPath(server.workspaceId, 'grc/systems'));
      expect(reply.status).toBe(500);
      expect(reply.json.error).toBe('server_error');
      expect(reply.json.message).not.toContain('disk on fire');
      expect(reply.json.message).not.toContain('/var/lib');
      expect(Object.keys(reply.json).sort()).toEqual(['error', 'message']);
      const requestId = reply.headers.get('x-request-id');
      const errorLine = lines.map((line) => JSON.parse(line)).find((entry) => entry.level === 'error');
      expect(errorLine).toMatchObject({ request_id: requestId, error: { message: 'disk on fire at /var/lib/secret/path' } });
      expect(reply.json.message).toContain(requestId);
    } finally {
      server.server.service.store.systems.list = original;
    }
    expect((await call(server, 'GET', wsPath(server.workspaceId, 'grc/systems'))).status).toBe(200);
  });
});

describe('error shape', () => {
  it('answers unknown paths and methods with 404 not_found in the error shape', async () => {
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/api'],
      ['POST', '/api/me'],
      ['DELETE', '/api/me'],
      ['GET', '/api/workspaces'],
      ['OPTIONS', '/api/me'],
    ] as const) {
      const reply = await call(server, method, path, { apiKey: null });
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.json).toEqual({ error: 'not_found', message: expect.any(String) });
    }
  });

  it('answers a malformed URL with 400 bad_request', async () => {
    const reply = await call(server, 'GET', `/api/workspaces/%E0%A4%A/governance/grc/systems`);
    expect(reply.status).toBe(400);
    expect(reply.json.error).toBe('bad_request');
  });
});

describe('a database that went away', () => {
  // The error handler on an app of its own whose routes fail as the store does when PostgreSQL is
  // down (DatabaseUnavailableError), with the handler's clock injected.
  async function appFailingWith(cause: Error, clock: { ms: number }) {
    const lines: string[] = [];
    const app = Fastify();
    app.setErrorHandler(
      createErrorHandler(
        (line) => lines.push(line),
        () => clock.ms,
      ),
    );
    const fail = async () => {
      throw new DatabaseUnavailableError('the database is unavailable', { cause });
    };
    app.get('/read', fail);
    app.post('/write', fail);
    await app.ready();
    return { app, lines };
  }

  it('answers 503 service_unavailable (a read without "nothing was stored") and logs why once per 10 s, not once per request', async () => {
    const clock = { ms: Date.UTC(2026, 10, 24, 12, 0, 0) };
    const { app, lines } = await appFailingWith(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), clock);
    try {
      const read = await app.inject({ method: 'GET', url: '/read' });
      expect(read.statusCode).toBe(503);
      expect(read.json()).toEqual({ error: 'service_unavailable', message: 'the database is unavailable; retry later' });
      const write = await app.inject({ method: 'POST', url: '/write', payload: {} });
      expect(write.json()).toEqual({ error: 'service_unavailable', message: 'the database is unavailable; nothing was stored, retry later' });
      for (let i = 0; i < 5; i++) await app.inject({ method: 'GET', url: '/read' });
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0])).toMatchObject({ level: 'warn', msg: 'database unavailable', reason: 'connect ECONNREFUSED 127.0.0.1:5432' });
      clock.ms += 10_000;
      await app.inject({ method: 'GET', url: '/read' });
      expect(lines).toHaveLength(2);
    } finally {
      await app.close();
    }
  });
});
