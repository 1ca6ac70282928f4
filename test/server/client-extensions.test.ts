/**
 * The extensions existing clients of this kind of service read (docs/service.md, "Extensions"):
 * the Python SDK's `mima` CLI (gates check, gates list, status/login through readiness, batch
 * `reason`), the MCP server's tools (check_gates, list_systems, derive_controls) and its live-server
 * test (health). Each test is built from what those clients read; the specification's members stay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECORD_TYPES, type RecordType } from '../../src/core/index.js';
import { setGatePolicy } from '../../src/server/index.js';
import { provisionWorkspace, startTestServer, type TestServer } from '../helpers/server.js';
import { attestation, call, evidenceRecord, wsPath } from '../helpers/service-requests.js';

let server: TestServer;
const clockMs = Date.parse('2026-06-01T12:00:00.000Z');

beforeAll(async () => {
  server = await startTestServer({ now: () => new Date(clockMs) });
});
afterAll(async () => {
  await server.stop();
});

async function workspace() {
  const ws = { url: server.url, ...(await provisionWorkspace(server.dbPath)) };
  const path = (rest: string) => wsPath(ws.workspaceId, rest);
  return {
    ...ws,
    write: (type: RecordType, overrides: Record<string, unknown> = {}) =>
      call(ws, 'POST', path('grc/evidence'), { body: evidenceRecord(type, { occurred_at: new Date(clockMs).toISOString(), ...overrides }) }),
    post: (rest: string, body: unknown) => call(ws, 'POST', path(rest), { body }),
    get: async (rest: string) => (await call(ws, 'GET', path(rest))).json,
  };
}

describe('GET grc/gates/check: passed and results beside gates', () => {
  it('passes when every blocking gate passes, even with advisory gates failing (mima gates check exits 0)', async () => {
    const ws = await workspace();
    // The EU AI Act gate (required, 80 %) passes with every record type; without a change_event
    // ISO 27001 misses control 8.32, so its advisory gate at 100 % fails.
    for (const type of RECORD_TYPES.filter((type) => type !== 'change_event')) expect((await ws.write(type)).status).toBe(201);
    await setGatePolicy(server.dbPath, { workspaceId: ws.workspaceId, framework: 'iso_27001', mode: 'advisory', threshold: 100 });
    const check = await ws.get('grc/gates/check');
    expect(check.gates).toHaveLength(5); // the specification's member is unchanged
    expect(check.passed).toBe(true);
    const iso = check.results.find((r: { framework: string }) => r.framework === 'iso_27001');
    expect(iso).toEqual({ framework: 'iso_27001', mode: 'advisory', threshold_pct: 100, current_pct: expect.any(Number), status: 'failing' });
    const eu = check.results.find((r: { framework: string }) => r.framework === 'eu_ai_act');
    expect(eu).toMatchObject({ mode: 'required', threshold_pct: 80, status: 'passing' });
    expect(eu.current_pct).toBeGreaterThanOrEqual(80);
    // results and gates agree gate by gate
    check.gates.forEach((gate: { passing: boolean; blocking: boolean }, index: number) => {
      expect(check.results[index].status).toBe(gate.passing ? 'passing' : 'failing');
      expect(check.results[index].mode).toBe(gate.blocking ? 'required' : 'advisory');
    });
  });

  it('fails when a blocking gate fails', async () => {
    const ws = await workspace();
    const check = await ws.get('grc/gates/check');
    expect(check.passed).toBe(false);
    expect(check.results.map((r: { framework: string; status: string }) => [r.framework, r.status])).toEqual([
      ['eu_ai_act', 'failing'],
      ['iso_42001', 'failing'],
      ['soc2_type2', 'failing'],
      ['iso_27001', 'failing'],
      ['nist_airf', 'failing'],
    ]);
  });
});

describe('GET grc/readiness', () => {
  it('answers the scores with the control counts behind them, agreeing with the posture brief', async () => {
    const ws = await workspace();
    await ws.write('ai_risk_assessment');
    const readiness = await ws.get('grc/readiness');
    const brief = await ws.get('grc/posture-brief');
    expect(readiness.overall_pct).toBe(brief.overall_pct);
    expect(readiness.frameworks.map((f: { framework: string; score_pct: number }) => ({ framework: f.framework, score_pct: f.score_pct }))).toEqual(
      brief.frameworks,
    );
    for (const framework of readiness.frameworks) {
      expect(framework.controls_required).toBeGreaterThan(0);
      expect(framework.controls_covered).toBeLessThanOrEqual(framework.controls_required);
      expect(framework.score_pct).toBe(Math.floor((framework.controls_covered * 100) / framework.controls_required));
    }
    expect(readiness.frameworks.find((f: { framework: string }) => f.framework === 'eu_ai_act').controls_covered).toBeGreaterThan(0);
  });
});

describe('GET grc/gates: the gate policy in effect', () => {
  it('lists one policy per framework with its id, mode, threshold, current score, status and scope', async () => {
    const ws = await workspace();
    await setGatePolicy(server.dbPath, { workspaceId: ws.workspaceId, framework: 'soc2_type2', mode: 'required', threshold: 50 });
    const gates = await ws.get('grc/gates');
    expect(gates.unconfigured_frameworks).toEqual([]);
    expect(gates.policies.map((p: { framework: string }) => p.framework)).toEqual(['eu_ai_act', 'iso_42001', 'soc2_type2', 'iso_27001', 'nist_airf']);
    expect(gates.policies[0]).toEqual({
      id: 'gate_eu_ai_act',
      framework: 'eu_ai_act',
      mode: 'required',
      threshold_pct: 80,
      current_pct: 0,
      status: 'failing',
      scope: 'workspace',
      source: 'default',
    });
    expect(gates.policies[2]).toMatchObject({ id: 'gate_soc2_type2', mode: 'required', threshold_pct: 50, source: 'workspace' });
  });

  it('cannot be changed with a writer key (403: changing it needs an admin key, test/server/key-roles.test.ts); POST stays 404', async () => {
    const ws = await workspace();
    const put = await call(ws, 'PUT', wsPath(ws.workspaceId, 'grc/gates'), { body: { framework: 'eu_ai_act', mode: 'advisory', threshold_pct: 0 } });
    expect(put.status).toBe(403);
    expect(put.json.error).toBe('forbidden');
    expect((await call(ws, 'DELETE', wsPath(ws.workspaceId, 'grc/gates/gate_eu_ai_act'))).status).toBe(403);
    expect((await call(ws, 'POST', wsPath(ws.workspaceId, 'grc/gates'), { body: { framework: 'eu_ai_act' } })).status).toBe(404);
    expect((await ws.get('grc/gates')).policies[0]).toMatchObject({ mode: 'required', threshold_pct: 80 });
  });
});

describe('GET grc/systems: what list_systems reads', () => {
  it('counts each system’s records, record types and earned controls, with is_registered, last_seen and a total', async () => {
    const ws = await workspace();
    await ws.write('change_event', { system_name: 'scorer' });
    await ws.write('change_event', { system_name: 'scorer' });
    await ws.write('ai_risk_assessment', { system_name: 'scorer' });
    await ws.write('incident_report', { system_name: 'chatbot' });
    await ws.post('attestations/external', attestation({ system_name: 'agent-only', executed_at: new Date(clockMs).toISOString() }));
    const { systems, total } = await ws.get('grc/systems');
    expect(total).toBe(3);
    const byName = Object.fromEntries(systems.map((s: { system_name: string }) => [s.system_name, s]));
    expect(byName.scorer).toMatchObject({ is_registered: true, registered: true, record_count: 3, record_types: ['ai_risk_assessment', 'change_event'] });
    const written = async (type: RecordType) => (await ws.post('grc/evidence?dry_run=true', evidenceRecord(type))).json.mapped_controls as string[];
    const expectedControls = [...new Set([...(await written('change_event')), ...(await written('ai_risk_assessment'))])].sort();
    expect(byName.scorer.controls).toEqual(expectedControls);
    expect(byName.chatbot).toMatchObject({
      is_registered: false,
      record_count: 1,
      record_types: ['incident_report'],
      controls: await written('incident_report'),
    });
    expect(byName['agent-only']).toMatchObject({ record_count: 0, record_types: [], controls: [], last_seen: new Date(clockMs).toISOString() });
  });

  it('takes system_name as another name of the name filter', async () => {
    const ws = await workspace();
    for (const name of ['loan-scorer', 'chatbot']) await ws.write('change_event', { system_name: name });
    const names = async (query: string) => (await ws.get(`grc/systems${query}`)).systems.map((s: { system_name: string }) => s.system_name);
    expect(await names('?system_name=loan')).toEqual(['loan-scorer']);
    expect(await names('?name=chat')).toEqual(['chatbot']);
    expect((await ws.get('grc/systems?system_name=nothing')).total).toBe(0);
  });
});
