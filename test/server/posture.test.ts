import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  controlsEarned,
  DEFAULT_GATE_POLICY,
  deriveControls,
  evaluateGates,
  frameworkScores,
  noteEarned,
  RECORD_TYPES,
  type RecordType,
} from '../../src/core/index.js';
import { setGatePolicy } from '../../src/server/index.js';
import { provisionWorkspace, startTestServer, type TestServer } from '../helpers/server.js';
import { attestation, call, evidenceRecord, PAYLOADS, wsPath } from '../helpers/service-requests.js';

const DAY = 86_400_000;
let server: TestServer;
/** the service clock, moved by the tests */
let clockMs = Date.parse('2026-06-01T12:00:00.000Z');

beforeAll(async () => {
  server = await startTestServer({ now: () => new Date(clockMs) });
});
afterAll(async () => {
  await server.stop();
});

/** A fresh workspace on the shared server. */
async function workspace() {
  const ws = { url: server.url, ...(await provisionWorkspace(server.dbPath)) };
  const path = (rest: string) => wsPath(ws.workspaceId, rest);
  return {
    ...ws,
    write: (type: RecordType, overrides: Record<string, unknown> = {}) =>
      call(ws, 'POST', path('grc/evidence'), { body: evidenceRecord(type, { occurred_at: new Date(clockMs).toISOString(), ...overrides }) }),
    attest: (overrides: Record<string, unknown> = {}) =>
      call(ws, 'POST', path('attestations/external'), { body: attestation({ executed_at: new Date(clockMs).toISOString(), ...overrides }) }),
    get: async (rest: string) => (await call(ws, 'GET', path(rest))).json,
  };
}

describe('GET grc/posture-brief', () => {
  it('starts at zero with every gate failing and no systems', async () => {
    const ws = await workspace();
    expect(await ws.get('grc/posture-brief')).toEqual({
      overall_pct: 0,
      frameworks: ['eu_ai_act', 'iso_42001', 'soc2_type2', 'iso_27001', 'nist_airf'].map((framework) => ({ framework, score_pct: 0 })),
      failing_gates: ['eu_ai_act', 'iso_42001', 'soc2_type2', 'iso_27001', 'nist_airf'],
      unattested_24h: 0,
    });
  });

  it('rises as records arrive, exactly as core scores the controls they earn', async () => {
    const ws = await workspace();
    const coverage = new Map<string, number>();
    for (const type of RECORD_TYPES) {
      expect((await ws.write(type)).status).toBe(201);
      noteEarned(coverage, controlsEarned(type, PAYLOADS[type]), clockMs);
      const brief = await ws.get('grc/posture-brief');
      const expected = frameworkScores(coverage, clockMs);
      expect(brief.overall_pct, type).toBe(expected.overall_pct);
      expect(brief.frameworks, type).toEqual(expected.frameworks);
    }
    const brief = await ws.get('grc/posture-brief');
    expect(brief.overall_pct).toBeGreaterThan(50);
    const gates = evaluateGates(coverage, DEFAULT_GATE_POLICY, clockMs);
    expect(brief.failing_gates).toEqual(gates.filter((g) => !g.passing).map((g) => g.gate_id.replace(/^gate_/, '')));
  });

  it('lets back-dated records count from when they occurred and future-dated ones only from when they arrived', async () => {
    const ws = await workspace();
    // change_event earns controls with a freshness window; dated 400 days ago it is stale at once.
    await ws.write('change_event', { occurred_at: new Date(clockMs - 400 * DAY).toISOString() });
    expect((await ws.get('grc/posture-brief')).overall_pct).toBe(0);

    const start = clockMs;
    await ws.write('change_event', { occurred_at: new Date(start + 1000 * DAY).toISOString() });
    const fresh = await ws.get('grc/posture-brief');
    expect(fresh.overall_pct).toBeGreaterThan(0);
    try {
      clockMs = start + 366 * DAY; // past every freshness window counted from arrival
      expect((await ws.get('grc/posture-brief')).overall_pct).toBe(0);
    } finally {
      clockMs = start;
    }
  });

  it('counts the systems without an attestation in the last 24 hours', async () => {
    const ws = await workspace();
    await ws.write('change_event', { system_name: 'never-attested' });
    await ws.attest({ system_name: 'attested' });
    await ws.write('change_event', { system_name: 'attested' });
    expect((await ws.get('grc/posture-brief')).unattested_24h).toBe(1);
    const start = clockMs;
    try {
      clockMs = start + 25 * 3_600_000;
      expect((await ws.get('grc/posture-brief')).unattested_24h).toBe(2);
      await ws.attest({ system_name: 'attested' });
      expect((await ws.get('grc/posture-brief')).unattested_24h).toBe(1);
    } finally {
      clockMs = start;
    }
  });
});

describe('GET grc/gates/check', () => {
  it('answers one gate per framework under the default policy', async () => {
    const ws = await workspace();
    await ws.write('ai_risk_assessment');
    const { gates } = await ws.get('grc/gates/check');
    const coverage = new Map<string, number>();
    noteEarned(coverage, controlsEarned('ai_risk_assessment', PAYLOADS.ai_risk_assessment), clockMs);
    expect(gates).toEqual(evaluateGates(coverage, DEFAULT_GATE_POLICY, clockMs));
    expect(gates[0]).toMatchObject({ gate_id: 'gate_eu_ai_act', passing: false, blocking: true, exit_code: 2 });
    expect(typeof gates[0].reason).toBe('string');
  });

  it('follows the workspace gate policy set with setGatePolicy, and only that workspace', async () => {
    const ws = await workspace();
    const bystander = await workspace();
    await ws.write('ai_risk_assessment');
    await setGatePolicy(server.dbPath, { workspaceId: ws.workspaceId, framework: 'eu_ai_act', mode: 'advisory', threshold: 10 });
    await setGatePolicy(server.dbPath, { workspaceId: ws.workspaceId, framework: 'iso_27001', mode: 'required' });
    const { gates } = await ws.get('grc/gates/check');
    const euGate = gates.find((g: { gate_id: string }) => g.gate_id === 'gate_eu_ai_act');
    expect(euGate).toMatchObject({ passing: true, blocking: false, exit_code: 0 });
    expect(euGate.reason).toBeUndefined();
    expect(gates.find((g: { gate_id: string }) => g.gate_id === 'gate_iso_27001')).toMatchObject({ passing: false, blocking: true, exit_code: 2 });
    expect((await ws.get('grc/posture-brief')).failing_gates).not.toContain('eu_ai_act');
    expect((await bystander.get('grc/posture-brief')).failing_gates).toContain('eu_ai_act');
    expect((await bystander.get('grc/gates/check')).gates[0]).toMatchObject({ blocking: true });
  });
});

describe('GET grc/systems', () => {
  it('knows a system once a record or an attestation names it; registered with the risk level of its latest assessment', async () => {
    const ws = await workspace();
    await ws.attest({ system_name: 'Loan-Scorer' });
    let [system] = (await ws.get('grc/systems')).systems;
    expect(system).toEqual({
      system_id: expect.stringMatching(/^sys_/),
      system_name: 'Loan-Scorer',
      registered: false,
      risk_tier: null,
      last_evidence_at: new Date(clockMs).toISOString(),
      // extensions (docs/service.md): an attestation is not an evidence record
      is_registered: false,
      last_seen: new Date(clockMs).toISOString(),
      record_count: 0,
      record_types: [],
      controls: [],
    });
    const id = system.system_id;

    const assess = (level: string, ageDays: number) =>
      ws.write('ai_risk_assessment', {
        system_name: 'Loan-Scorer',
        occurred_at: new Date(clockMs - ageDays * DAY).toISOString(),
        payload: { ...PAYLOADS.ai_risk_assessment, risk_level: level, ...(level === 'high' ? { annex_iii_category: 'essential_services' } : {}) },
      });
    await assess('high', 10);
    [system] = (await ws.get('grc/systems')).systems;
    expect(system).toMatchObject({ system_id: id, registered: true, risk_tier: 'high' });
    await assess('limited', 5); // newer: wins
    expect((await ws.get('grc/systems')).systems[0].risk_tier).toBe('limited');
    await assess('minimal', 20); // older, arriving later: does not
    expect((await ws.get('grc/systems')).systems[0].risk_tier).toBe('limited');
  });

  it('filters by name, case-insensitively and by part, and lists by name', async () => {
    const ws = await workspace();
    for (const name of ['Loan-Scorer', 'loan-approver', 'chatbot']) await ws.write('change_event', { system_name: name });
    const names = async (query: string) => (await ws.get(`grc/systems${query}`)).systems.map((s: { system_name: string }) => s.system_name);
    expect(await names('')).toEqual(['Loan-Scorer', 'chatbot', 'loan-approver']);
    expect(await names('?name=LOAN')).toEqual(['Loan-Scorer', 'loan-approver']);
    expect(await names('?name=scor')).toEqual(['Loan-Scorer']);
    expect(await names('?name=%25')).toEqual([]);
    expect(await names('?name=nothing')).toEqual([]);
  });
});

describe('POST grc/derive-controls', () => {
  it('answers core’s recommendations for the description and risk tier', async () => {
    const ws = await workspace();
    const reply = await call(ws, 'POST', wsPath(ws.workspaceId, 'grc/derive-controls'), {
      body: { description: 'Scores consumer loan applications', risk_tier: 'high' },
    });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ recommendations: deriveControls('Scores consumer loan applications', 'high') });
    expect(reply.json.recommendations[0]).toMatchObject({ record_type: 'ai_risk_assessment', priority: 'required' });
  });

  it('answers 422 for a missing or unknown risk_tier and a missing or non-string description', async () => {
    const ws = await workspace();
    const cases: [Record<string, unknown>, string][] = [
      [{ description: 'x' }, 'risk_tier'],
      [{ description: 'x', risk_tier: 'severe' }, 'risk_tier'],
      [{ description: 'x', risk_tier: 'HIGH' }, 'risk_tier'],
      [{ risk_tier: 'high' }, 'description'],
      [{ description: 42, risk_tier: 'high' }, 'description'],
    ];
    for (const [body, field] of cases) {
      const reply = await call(ws, 'POST', wsPath(ws.workspaceId, 'grc/derive-controls'), { body });
      expect(reply.status).toBe(422);
      expect(reply.json).toMatchObject({ error: 'validation_error', field });
    }
  });
});
