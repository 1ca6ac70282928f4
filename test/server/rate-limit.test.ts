import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RATE_LIMIT_PER_MINUTE } from '../../src/server/index.js';
import { provisionWorkspace, startTestServer, testBackend, type TestServer } from '../helpers/server.js';
import { call, pool, wsPath } from '../helpers/service-requests.js';

/**
 * SQLite runs the real default, 2000 a minute per workspace. PostgreSQL counts the same budget in
 * a row of the database (store/postgres/budget.ts), which 200 requests prove exact as well as 2000
 * do; the default's value and its wiring into the server are the HTTP layer's, the same code on
 * both backends and proven on SQLite (1 800 fewer database round trips a run).
 */
const POSTGRES_LIMIT = 200;
const LIMIT = testBackend() === 'postgres' ? POSTGRES_LIMIT : DEFAULT_RATE_LIMIT_PER_MINUTE;

/** The budgets' clock: it moves only when the test moves it, however long the requests take. */
const clock = { ms: Date.parse('2026-03-01T12:00:00Z') };

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ budgetNowMs: () => clock.ms, ...(testBackend() === 'postgres' ? { rateLimitPerMinute: POSTGRES_LIMIT } : {}) });
});
afterAll(async () => {
  await server.stop();
});

describe('rate limit', () => {
  it(`passes ${LIMIT} requests a minute for a workspace across its endpoints (${LIMIT === DEFAULT_RATE_LIMIT_PER_MINUTE ? 'the default' : 'the budget it was started with'}), answers the next with 429 and Retry-After, leaves other workspaces alone, and passes requests again once the minute is over`, async () => {
    expect(DEFAULT_RATE_LIMIT_PER_MINUTE).toBe(2000);
    const other = { url: server.url, ...(await provisionWorkspace(server.dbPath)) };
    const paths = [
      '/api/me',
      wsPath(server.workspaceId, 'grc/systems'),
      wsPath(server.workspaceId, 'grc/posture-brief'),
      wsPath(server.workspaceId, 'grc/evidence?limit=1'),
    ];

    // In-process first (the app's inject: the same routes, hooks and store as a socket's request,
    // without the HTTP client and parser around each of the 2000), so that the requests over HTTP
    // after it open their connection then and show the limit a client on the socket meets.
    const app = server.server.service.app;
    const get = (url: string, key: string) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });

    // Requests that fail authentication or name another workspace spend nothing.
    const strangers = await pool(Array.from({ length: 100 }), 10, (_, i) => (i % 2 === 0 ? get(paths[1], 'gk_wrong') : get(paths[1], other.apiKey)));
    expect(strangers.map((r) => r.statusCode).sort()).toEqual([...Array(50).fill(401), ...Array(50).fill(404)]);

    const replies = await pool(Array.from({ length: LIMIT }), 16, (_, i) => get(paths[i % paths.length], server.apiKey));
    const statuses = new Map<number, number>();
    for (const reply of replies) statuses.set(reply.statusCode, (statuses.get(reply.statusCode) ?? 0) + 1);
    expect(Object.fromEntries(statuses)).toEqual({ 200: LIMIT });

    clock.ms += 20_000;
    const limited = await call(server, 'GET', paths[1]);
    expect(limited.status).toBe(429);
    expect(limited.json.error).toBe('rate_limited');
    expect(typeof limited.json.message).toBe('string');
    // the minute began with the first request, 20 s ago
    expect(limited.headers.get('retry-after')).toBe('40');
    // every endpoint of the workspace is limited, writes included
    expect((await call(server, 'POST', wsPath(server.workspaceId, 'grc/evidence'), { body: {} })).status).toBe(429);
    expect((await call(server, 'GET', '/api/me')).status).toBe(429);

    expect((await call(other, 'GET', wsPath(other.workspaceId, 'grc/systems'))).status).toBe(200);
    expect((await call(other, 'GET', '/api/me')).status).toBe(200);

    clock.ms += 40_000;
    expect((await call(server, 'GET', paths[1])).status).toBe(200);
  }, 60_000);
});
