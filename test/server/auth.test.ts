import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../src/server/index.js';
import { provisionWorkspace, startTestServer, type TestServer } from '../helpers/server.js';
import { attestation, call, countRows, evidenceRecord, wsPath } from '../helpers/service-requests.js';

const endpoints = (ws: string): [string, string][] => [
  ['GET', '/api/me'],
  ['POST', wsPath(ws, 'grc/evidence')],
  ['GET', wsPath(ws, 'grc/evidence')],
  ['GET', wsPath(ws, 'grc/evidence/rec_x')],
  ['POST', wsPath(ws, 'attestations/external')],
  ['POST', wsPath(ws, 'attestations/batch')],
  ['GET', wsPath(ws, 'grc/posture-brief')],
  ['GET', wsPath(ws, 'grc/systems')],
  ['GET', wsPath(ws, 'grc/gates/check')],
  ['GET', wsPath(ws, 'grc/gates')],
  ['GET', wsPath(ws, 'grc/readiness')],
  ['POST', wsPath(ws, 'grc/derive-controls')],
];

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

describe('GET /api/me', () => {
  it('answers the identity the key belongs to', async () => {
    const reply = await call(server, 'GET', '/api/me');
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ user_id: server.userId, workspace_id: server.workspaceId, org_id: server.orgId });
    expect(reply.json.user_id).toMatch(/^usr_/);
    expect(reply.json.workspace_id).toMatch(/^ws_/);
    expect(reply.json.org_id).toMatch(/^org_/);
  });
});

describe('authentication', () => {
  it('answers 401 unauthorized on every endpoint without an Authorization header', async () => {
    for (const [method, path] of endpoints(server.workspaceId)) {
      const reply = await call(server, method, path, { apiKey: null, ...(method === 'POST' ? { body: {} } : {}) });
      expect(reply.status, `${method} ${path}`).toBe(401);
      expect(reply.json.error).toBe('unauthorized');
      expect(typeof reply.json.message).toBe('string');
    }
  });

  it('answers 401 for an unknown key, a malformed header and another scheme', async () => {
    for (const authorization of [`Bearer gk_${'A'.repeat(43)}`, 'Bearer', `Basic ${server.apiKey}`, server.apiKey, `Bearer ${server.apiKey} extra`]) {
      const reply = await call(server, 'GET', '/api/me', { apiKey: null, headers: { authorization } });
      expect(reply.status, authorization.slice(0, 12)).toBe(401);
      expect(reply.json.error).toBe('unauthorized');
    }
  });

  it('accepts the scheme in any case', async () => {
    const reply = await call(server, 'GET', '/api/me', { apiKey: null, headers: { authorization: `bearer ${server.apiKey}` } });
    expect(reply.status).toBe(200);
  });

  it('answers 401 for a revoked key from the moment it is revoked', async () => {
    const key = await createApiKey(server.dbPath, { workspaceId: server.workspaceId, name: 'to revoke' });
    expect((await call(server, 'GET', '/api/me', { apiKey: key.api_key })).status).toBe(200);
    await revokeApiKey(server.dbPath, key.key_id);
    const reply = await call(server, 'GET', '/api/me', { apiKey: key.api_key });
    expect(reply.status).toBe(401);
    expect(reply.json.error).toBe('unauthorized');
  });

  it('answers 401 for an expired key and accepts one that has not expired yet', async () => {
    const expired = await createApiKey(server.dbPath, { workspaceId: server.workspaceId, expiresAt: new Date(Date.now() - 1000) });
    const valid = await createApiKey(server.dbPath, { workspaceId: server.workspaceId, expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await call(server, 'GET', '/api/me', { apiKey: expired.api_key })).status).toBe(401);
    expect((await call(server, 'GET', '/api/me', { apiKey: valid.api_key })).status).toBe(200);
  });

  it('checks the key before reading the body: a bad body with a bad key is 401, not 400', async () => {
    const reply = await call(server, 'POST', wsPath(server.workspaceId, 'grc/evidence'), { apiKey: 'nope', body: '{not json' });
    expect(reply.status).toBe(401);
  });
});

describe('workspace isolation', () => {
  it('answers 404 not_found for a workspace the key does not belong to, on every workspace endpoint, and writes nothing', async () => {
    const other = await provisionWorkspace(server.dbPath);
    const bodies: Record<string, unknown> = {
      [wsPath(other.workspaceId, 'grc/evidence')]: evidenceRecord('change_event'),
      [wsPath(other.workspaceId, 'attestations/external')]: attestation(),
      [wsPath(other.workspaceId, 'attestations/batch')]: { records: [attestation()] },
      [wsPath(other.workspaceId, 'grc/derive-controls')]: { description: 'x', risk_tier: 'high' },
    };
    for (const [method, path] of endpoints(other.workspaceId)) {
      if (path === '/api/me') continue;
      const reply = await call(server, method, path, method === 'POST' ? { body: bodies[path] } : {});
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.json).toEqual({ error: 'not_found', message: 'workspace not found' });
    }
    // A workspace that does not exist at all answers the same.
    const unknown = await call(server, 'GET', wsPath('ws_00000000-0000-0000-0000-000000000000', 'grc/evidence'));
    expect(unknown.status).toBe(404);

    const otherKey = { url: server.url, apiKey: other.apiKey };
    expect((await call(otherKey, 'GET', wsPath(other.workspaceId, 'grc/evidence'))).json).toEqual({ records: [], total: 0 });
    expect((await call(otherKey, 'GET', wsPath(other.workspaceId, 'grc/systems'))).json).toEqual({ systems: [], total: 0 });
    expect((await call(otherKey, 'GET', wsPath(other.workspaceId, 'grc/posture-brief'))).json.overall_pct).toBe(0);
    for (const table of ['evidence', 'attestations', 'systems', 'control_coverage']) expect(countRows(server.dbPath, table, other.workspaceId), table).toBe(0);
  });

  it('keeps two workspaces apart: each sees only its own records, systems and posture', async () => {
    const a = server;
    const b = { url: server.url, ...(await provisionWorkspace(server.dbPath)) };
    const written = await call(a, 'POST', wsPath(a.workspaceId, 'grc/evidence'), { body: evidenceRecord('access_review', { system_name: 'only-in-a' }) });
    expect(written.status).toBe(201);

    const bList = await call(b, 'GET', wsPath(b.workspaceId, 'grc/evidence'));
    expect(bList.json.records).toEqual([]);
    expect((await call(b, 'GET', wsPath(b.workspaceId, 'grc/systems'))).json.systems).toEqual([]);
    expect((await call(b, 'GET', wsPath(b.workspaceId, `grc/evidence/${written.json.record_id}`))).status).toBe(404);
    expect((await call(b, 'GET', wsPath(b.workspaceId, 'grc/posture-brief'))).json.overall_pct).toBe(0);

    const aSystems = (await call(a, 'GET', wsPath(a.workspaceId, 'grc/systems'))).json.systems.map((s: { system_name: string }) => s.system_name);
    expect(aSystems).toContain('only-in-a');
    expect((await call(b, 'GET', '/api/me')).json.workspace_id).toBe(b.workspaceId);
  });
});
