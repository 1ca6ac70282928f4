/**
 * API key roles (docs/security.md, "API key roles") in a real service over a real database of the
 * test backend: a reader key reads everything in its workspace and writes nothing, a writer key
 * also writes records, an admin key also changes the gate policy with the calls the hosted
 * service's Python client makes for `mima gates set|unset`, each change logged with the key's user.
 * The write routes a reader is refused on are taken from the application's own route table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, listApiKeys } from '../../src/server/index.js';
import { storedRows } from '../helpers/backend.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { attestation, call, evidenceRecord, wsPath } from '../helpers/service-requests.js';

let server: TestServer;
let keys: Record<'reader' | 'writer' | 'admin', string>;

beforeAll(async () => {
  server = await startTestServer();
  const make = async (role: 'reader' | 'admin') => (await createApiKey(server.dbPath, { workspaceId: server.workspaceId, role, name: role })).api_key;
  keys = { reader: await make('reader'), writer: server.apiKey, admin: await make('admin') };
  // something to read
  expect((await call(server, 'POST', wsPath(server.workspaceId, 'grc/evidence'), { body: evidenceRecord('ai_risk_assessment') })).status).toBe(201);
});
afterAll(async () => {
  await server.stop();
});

const as = (role: keyof typeof keys) => ({ url: server.url, apiKey: keys[role] });
const path = (rest: string) => wsPath(server.workspaceId, rest);

/** Every route of the application that is not a read, with its parameters filled in. */
function writeRoutes(): { method: string; url: string; access: string }[] {
  return server.server.service.routes
    .filter((route) => route.access !== 'read')
    .map((route) => ({ ...route, url: route.url.replace(':workspace_id', server.workspaceId).replace(/:\w+/g, 'gate_eu_ai_act') }));
}

describe('API key roles', () => {
  it('lists each key with its role; the first key of a workspace, like every key made before roles, is a writer', async () => {
    const listed = await listApiKeys(server.dbPath, { workspaceId: server.workspaceId });
    expect(listed.map((key) => [key.name, key.role])).toEqual([
      ['default', 'writer'],
      ['reader', 'reader'],
      ['admin', 'admin'],
    ]);
    await expect(createApiKey(server.dbPath, { workspaceId: server.workspaceId, role: 'owner' as never })).rejects.toMatchObject({
      code: 'invalid',
      field: 'role',
    });
  });

  it('a reader key reads everything in its workspace', async () => {
    for (const rest of [
      'grc/evidence',
      'grc/evidence/export',
      'attestations',
      'grc/posture-brief',
      'grc/readiness',
      'grc/systems',
      'grc/gates',
      'grc/gates/check',
      'grc/gates/policy',
      'ledger/proof/consistency?from=0&to=0',
    ]) {
      const reply = await call(as('reader'), 'GET', path(rest));
      expect({ rest, status: reply.status }).toEqual({ rest, status: 200 });
    }
    expect((await call(as('reader'), 'GET', '/api/me')).status).toBe(200);
    // derive-controls is a POST that stores nothing
    const derived = await call(as('reader'), 'POST', path('grc/derive-controls'), { body: { description: 'Scores loans', risk_tier: 'high' } });
    expect(derived.status).toBe(200);
  });

  it('a reader key is refused on every write route of the route table (403 in the error shape), and nothing is stored', async () => {
    const routes = writeRoutes();
    // the table is the application's own: every write endpoint is in it
    expect(routes.map((route) => `${route.method} ${route.url.replace(server.workspaceId, '{ws}')}`).sort()).toEqual(
      expect.arrayContaining([
        'POST /api/workspaces/{ws}/governance/grc/evidence',
        'POST /api/workspaces/{ws}/governance/grc/evidence/batch',
        'POST /api/workspaces/{ws}/governance/attestations/external',
        'POST /api/workspaces/{ws}/governance/attestations/batch',
        'POST /api/workspaces/{ws}/governance/ledger/cosignatures',
        'PUT /api/workspaces/{ws}/governance/grc/gates',
        'DELETE /api/workspaces/{ws}/governance/grc/gates/gate_eu_ai_act',
      ]),
    );
    const before = await storedRows(server.dbPath, 'SELECT record_id FROM evidence');
    for (const route of routes) {
      const body = route.method === 'DELETE' ? undefined : route.url.endsWith('/external') ? attestation() : { records: [evidenceRecord()] };
      const reply = await call(as('reader'), route.method, route.url, body === undefined ? {} : { body });
      expect({ route: `${route.method} ${route.url}`, status: reply.status, error: reply.json?.error }).toEqual({
        route: `${route.method} ${route.url}`,
        status: 403,
        error: 'forbidden',
      });
      expect(Object.keys(reply.json).sort()).toEqual(['error', 'message']);
      expect(reply.json.message).toMatch(/role is reader/);
    }
    expect(await storedRows(server.dbPath, 'SELECT record_id FROM evidence')).toEqual(before);
  });

  it('a writer key writes records but is refused on the gate policy (403)', async () => {
    expect((await call(as('writer'), 'POST', path('grc/evidence'), { body: evidenceRecord() })).status).toBe(201);
    for (const route of writeRoutes().filter((r) => r.access === 'admin')) {
      const reply = await call(as('writer'), route.method, route.url, route.method === 'PUT' ? { body: { framework: 'eu_ai_act', mode: 'advisory' } } : {});
      expect({ route: route.url, status: reply.status, error: reply.json.error }).toEqual({ route: route.url, status: 403, error: 'forbidden' });
      expect(reply.json.message).toMatch(/needs an admin key/);
    }
  });

  it("an admin key sets and unsets a gate with mima gates' calls, each change logged with the key's user", async () => {
    const adminUser = (await call(as('admin'), 'GET', '/api/me')).json.user_id as string;
    expect(adminUser).toMatch(/^usr_/);
    // mima gates set eu_ai_act advisory --threshold 60
    const set = await call(as('admin'), 'PUT', path('grc/gates'), {
      body: { framework: 'eu_ai_act', mode: 'advisory', threshold_pct: 60, scope: 'workspace' },
    });
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({
      id: 'gate_eu_ai_act',
      framework: 'eu_ai_act',
      mode: 'advisory',
      threshold_pct: 60,
      scope: 'workspace',
      source: 'workspace',
    });
    expect(set.json.change).toMatchObject({ action: 'set', framework: 'eu_ai_act', changed_by: adminUser });
    const listing = (await call(as('reader'), 'GET', path('grc/gates'))).json.policies;
    const policy = listing.find((entry: { framework: string }) => entry.framework === 'eu_ai_act');
    expect(policy).toMatchObject({ mode: 'advisory', threshold_pct: 60 });
    expect((await call(as('reader'), 'GET', path('grc/gates/check'))).json.gates[0]).toMatchObject({ gate_id: 'gate_eu_ai_act', blocking: false });

    // mima gates unset eu_ai_act: the id from the listing
    const unset = await call(as('admin'), 'DELETE', path(`grc/gates/${policy.id}`));
    expect(unset.status).toBe(200);
    expect(unset.json).toMatchObject({ framework: 'eu_ai_act', mode: 'required', threshold_pct: 80, source: 'default' });
    const { changes } = (await call(as('reader'), 'GET', path('grc/gates/policy'))).json;
    expect(changes.slice(-2).map((c: { action: string; changed_by: string }) => [c.action, c.changed_by])).toEqual([
      ['set', adminUser],
      ['unset', adminUser],
    ]);
    // the framework slug names a gate too
    expect((await call(as('admin'), 'DELETE', path('grc/gates/soc2_type2'))).status).toBe(200);
  });

  it('refuses a gate it cannot keep: another scope, an unknown framework, mode or member (422), an unknown gate id (404)', async () => {
    const put = (body: Record<string, unknown>) => call(as('admin'), 'PUT', path('grc/gates'), { body });
    const before = (await call(as('reader'), 'GET', path('grc/gates/policy'))).json.changes.length;
    expect((await put({ framework: 'eu_ai_act', mode: 'required', threshold_pct: 80, scope: 'inference-service' })).json).toMatchObject({
      error: 'validation_error',
      field: 'scope',
    });
    expect((await put({ framework: 'gdpr', mode: 'required' })).json).toMatchObject({ error: 'validation_error', field: 'framework' });
    expect((await put({ framework: 'eu_ai_act', mode: 'blocking' })).json).toMatchObject({ error: 'validation_error', field: 'mode' });
    expect((await put({ framework: 'eu_ai_act', threshold_pct: 101 })).json).toMatchObject({ error: 'validation_error', field: 'threshold_pct' });
    expect((await put({ framework: 'eu_ai_act' })).status).toBe(422);
    expect((await put({ framework: 'eu_ai_act', mode: 'required', threshold: 5 })).json).toMatchObject({ error: 'validation_error', field: 'threshold' });
    const unknown = await call(as('admin'), 'DELETE', path('grc/gates/gate_nope'));
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toBe('not_found');
    expect((await call(as('reader'), 'GET', path('grc/gates/policy'))).json.changes.length).toBe(before);
  });
});
