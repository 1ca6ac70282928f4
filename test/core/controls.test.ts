import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { JsonFloat } from '../../src/core/canonical-json.js';
import {
  CONTROLS,
  ControlCatalogueError,
  DAY_MS,
  DEFAULT_GATE_POLICY,
  DERIVE_TIER_RULES,
  RISK_TIERS,
  controlById,
  controlsEarned,
  controlsForFramework,
  deriveControls,
  earnableControls,
  evaluateGates,
  failingGateFrameworks,
  frameworkScores,
  gatesExitCode,
  isRiskTier,
  loadControlCatalogue,
  matchedKeywordRules,
  mergeGatePolicy,
  missingControls,
  noteEarned,
  validateGatePolicy,
  type GatePolicy,
} from '../../src/core/controls/index.js';
import { FRAMEWORKS, RECORD_TYPES, type Framework } from '../../src/core/records/types.js';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');

// docs/controls.md, written out independently of controls.json (every conditional control included).
const EXPECTED: Record<string, string[]> = {
  ai_risk_assessment: [
    'EUAIA_ART9',
    'EUAIA_ART11',
    'ISO42001_A6_1',
    'ISO42001_A9_1',
    'SOC2_CC3_1',
    'SOC2_CC3_2',
    'SOC2_CC5_1',
    'NIST_AIRF_GOVERN_1',
    'NIST_AIRF_MAP_1',
  ],
  model_evaluation: [
    'EUAIA_ART9',
    'EUAIA_ART15_ACCURACY',
    'EUAIA_ART15_ROBUSTNESS',
    'ISO42001_A6_3',
    'ISO42001_A9_2',
    'SOC2_CC3_2',
    'SOC2_CC4_1',
    'SOC2_CC3_3',
    'SOC2_CC5_1',
    'NIST_AIRF_MEASURE_1',
  ],
  human_oversight: ['EUAIA_ART13', 'EUAIA_ART14', 'ISO42001_A6_6', 'NIST_AIRF_GOVERN_1'],
  training_data_governance: ['EUAIA_ART10', 'ISO42001_A5_4', 'ISO42001_A6_5', 'NIST_AIRF_MAP_1'],
  incident_report: [
    'EUAIA_ART73',
    'ISO42001_A3_2',
    'SOC2_CC7_3',
    'SOC2_CC7_4',
    'SOC2_CC3_3',
    'SOC2_CC4_2',
    'ISO27001_A5_25',
    'ISO27001_A5_26',
    'NIST_AIRF_MANAGE_1',
  ],
  change_event: ['ISO42001_A6_2', 'SOC2_CC8_1', 'ISO27001_A8_32'],
  access_review: ['ISO42001_A9_2', 'SOC2_CC6_1', 'SOC2_CC6_2', 'SOC2_CC6_3', 'ISO27001_A5_16', 'ISO27001_A5_18'],
  vendor_risk: ['ISO42001_A10_3', 'SOC2_CC9_2', 'ISO27001_A5_19', 'ISO27001_A5_22'],
  policy_acknowledged: ['EUAIA_ART4', 'ISO42001_A2_2', 'SOC2_CC1_4', 'SOC2_CC5_3', 'ISO27001_A6_3'],
  model_drift_event: ['EUAIA_ART9', 'EUAIA_ART72', 'ISO42001_A6_4', 'SOC2_CC4_1', 'SOC2_CC4_2', 'NIST_AIRF_MEASURE_1', 'NIST_AIRF_MANAGE_1'],
  governance_review: ['EUAIA_ART9', 'ISO42001_A9_3', 'SOC2_CC2_1', 'SOC2_CC5_2', 'NIST_AIRF_GOVERN_1'],
};

const sorted = (ids: string[]): string[] => [...ids].sort();
const FULL_EVALUATION = {
  model_id: 'm',
  dataset: 'd',
  accuracy: 0.91,
  evaluated_by: 'a@x',
  evaluation_type: 'quarterly',
  robustness_score: 0.8,
  bias_metrics: { parity: 0.02 },
};
const BARE_EVALUATION = { model_id: 'm', dataset: 'd', accuracy: 0.91, evaluated_by: 'a@x', evaluation_type: 'quarterly' };

/** Coverage with every given control earned `ageDays` before NOW. */
function coverageOf(ids: Iterable<string>, ageDays = 0): Map<string, number> {
  const map = new Map<string, number>();
  for (const id of ids) map.set(id, NOW - ageDays * DAY_MS);
  return map;
}

const allIds = (framework?: Framework): string[] => (framework ? controlsForFramework(framework) : CONTROLS).map((control) => control.id);
const catalogueJson = (): Record<string, any> => JSON.parse(readFileSync(new URL('../../src/core/controls/controls.json', import.meta.url), 'utf8'));

describe('control catalogue', () => {
  it('holds exactly the controls of the docs/controls.md table, once each', () => {
    const fromTable = new Set(Object.values(EXPECTED).flat());
    expect(new Set(allIds())).toEqual(fromTable);
    expect(CONTROLS).toHaveLength(52);
  });

  it('gives every control an upper-case id with its framework prefix, a title and a freshness window', () => {
    const prefix: Record<Framework, string> = {
      eu_ai_act: 'EUAIA_',
      iso_42001: 'ISO42001_',
      soc2_type2: 'SOC2_',
      iso_27001: 'ISO27001_',
      nist_airf: 'NIST_AIRF_',
    };
    for (const control of CONTROLS) {
      expect(control.id).toMatch(/^[A-Z0-9_]+$/);
      expect(control.id.startsWith(prefix[control.framework])).toBe(true);
      expect(control.title.length).toBeGreaterThan(0);
      expect(control.required).toBe(true);
      expect([30, 90, 365]).toContain(control.freshness_days);
    }
  });

  it('finds controls by id and by framework', () => {
    expect(controlById('ISO27001_A5_25')).toMatchObject({ framework: 'iso_27001', clause: 'A.5.25' });
    expect(controlById('NOPE')).toBeUndefined();
    expect(controlsForFramework('nist_airf').map((control) => control.id)).toEqual([
      'NIST_AIRF_GOVERN_1',
      'NIST_AIRF_MAP_1',
      'NIST_AIRF_MEASURE_1',
      'NIST_AIRF_MANAGE_1',
    ]);
    expect(FRAMEWORKS.map((framework) => controlsForFramework(framework).length)).toEqual([10, 13, 17, 8, 4]);
  });

  it('is frozen', () => {
    expect(Object.isFrozen(CONTROLS)).toBe(true);
    expect(Object.isFrozen(CONTROLS[0])).toBe(true);
  });
});

describe('control catalogue loader', () => {
  it('accepts the shipped catalogue', () => {
    expect(loadControlCatalogue(catalogueJson()).controls).toHaveLength(52);
  });

  const broken: [string, (doc: Record<string, any>) => void, RegExp][] = [
    ['a missing framework', (doc) => delete doc.frameworks.nist_airf, /frameworks\.nist_airf: missing/],
    ['an unknown framework', (doc) => (doc.frameworks.gdpr = { name: 'GDPR', id_prefix: 'GDPR_' }), /frameworks\.gdpr: unknown framework/],
    ['an id without its framework prefix', (doc) => (doc.controls[0].id = 'SOC2_ART4'), /controls\.0\.id: must start with EUAIA_/],
    ['a lower-case id', (doc) => (doc.controls[0].id = 'euaia_art4'), /controls\.0\.id: must be upper-case/],
    ['a duplicate id', (doc) => (doc.controls[1].id = doc.controls[0].id), /controls\.1\.id: EUAIA_ART4 duplicates controls\.0\.id/],
    ['an unknown record type', (doc) => (doc.controls[0].evidenced_by[0].record_type = 'policy_ack'), /evidenced_by\.0\.record_type: must be a record type/],
    ['a record type listed twice', (doc) => doc.controls[0].evidenced_by.push({ record_type: 'policy_acknowledged' }), /appears twice/],
    [
      'a condition on a field the record type lacks',
      (doc) => (doc.controls[7].evidenced_by[0].when.field = 'robustnes_score'),
      /model_evaluation has no payload field robustnes_score/,
    ],
    ['an unknown condition kind', (doc) => (doc.controls[7].evidenced_by[0].when.is = 'positive'), /when\.is: must be one of number, non_empty/],
    ['a zero freshness window', (doc) => (doc.controls[0].freshness_days = 0), /freshness_days/],
    ['a fractional freshness window', (doc) => (doc.controls[0].freshness_days = 1.5), /freshness_days/],
    ['an empty evidenced_by', (doc) => (doc.controls[0].evidenced_by = []), /evidenced_by: must be a non-empty array/],
    ['a misspelt key', (doc) => (doc.controls[0].freshnes_days = 90), /controls\.0\.freshnes_days: unknown key/],
    ['a non-boolean required', (doc) => (doc.controls[0].required = 'yes'), /required: must be true or false/],
    [
      'a framework with no required control',
      (doc) => doc.controls.forEach((c: any) => c.framework === 'nist_airf' && (c.required = false)),
      /nist_airf has no required control/,
    ],
    ['no controls', (doc) => (doc.controls = []), /controls: must be a non-empty array/],
  ];

  it.each(broken)('rejects %s', (_label, mutate, message) => {
    const doc = catalogueJson();
    mutate(doc);
    expect(() => loadControlCatalogue(doc)).toThrow(ControlCatalogueError);
    expect(() => loadControlCatalogue(doc)).toThrow(message);
  });

  it('rejects a catalogue that is not an object', () => {
    expect(() => loadControlCatalogue([])).toThrow(ControlCatalogueError);
    expect(() => loadControlCatalogue(null)).toThrow(ControlCatalogueError);
  });

  it('reports every problem at once', () => {
    const doc = catalogueJson();
    doc.controls[0].title = '';
    doc.controls[2].freshness_days = -1;
    try {
      loadControlCatalogue(doc);
      expect.unreachable();
    } catch (error) {
      expect((error as ControlCatalogueError).problems).toEqual([
        'controls.0.title: must be a non-empty string',
        'controls.2.freshness_days: must be a whole number of days from 1 to 3660',
      ]);
    }
  });
});

describe('controlsEarned', () => {
  it.each(RECORD_TYPES)('maps %s to the controls of the docs/controls.md table', (type) => {
    const payload = type === 'model_evaluation' ? FULL_EVALUATION : {};
    expect(controlsEarned(type, payload)).toEqual(sorted(EXPECTED[type]));
  });

  it('returns ids sorted in code-point order and the same on every call', () => {
    const first = controlsEarned('incident_report', {});
    expect(first).toEqual([
      'EUAIA_ART73',
      'ISO27001_A5_25',
      'ISO27001_A5_26',
      'ISO42001_A3_2',
      'NIST_AIRF_MANAGE_1',
      'SOC2_CC3_3',
      'SOC2_CC4_2',
      'SOC2_CC7_3',
      'SOC2_CC7_4',
    ]);
    expect(controlsEarned('incident_report', {})).toEqual(first);
  });

  it('earns the Art 15 robustness control only with a numeric robustness_score', () => {
    const without = controlsEarned('model_evaluation', BARE_EVALUATION);
    expect(without).not.toContain('EUAIA_ART15_ROBUSTNESS');
    expect(without).toContain('EUAIA_ART15_ACCURACY');
    expect(controlsEarned('model_evaluation', { ...BARE_EVALUATION, robustness_score: 0 })).toContain('EUAIA_ART15_ROBUSTNESS');
    expect(controlsEarned('model_evaluation', { ...BARE_EVALUATION, robustness_score: new JsonFloat(1) })).toContain('EUAIA_ART15_ROBUSTNESS');
    expect(controlsEarned('model_evaluation', { ...BARE_EVALUATION, robustness_score: 12345678901234567890n })).toContain('EUAIA_ART15_ROBUSTNESS');
    for (const notNumber of ['0.9', null, true, Number.NaN, Number.POSITIVE_INFINITY, [0.9]]) {
      expect(controlsEarned('model_evaluation', { ...BARE_EVALUATION, robustness_score: notNumber })).not.toContain('EUAIA_ART15_ROBUSTNESS');
    }
  });

  it('earns SOC 2 CC3.3 and CC5.1 from an evaluation only with non-empty bias_metrics', () => {
    const bias = ['SOC2_CC3_3', 'SOC2_CC5_1'];
    expect(controlsEarned('model_evaluation', BARE_EVALUATION)).not.toContain('SOC2_CC3_3');
    expect(controlsEarned('model_evaluation', BARE_EVALUATION)).not.toContain('SOC2_CC5_1');
    expect(controlsEarned('model_evaluation', { ...BARE_EVALUATION, bias_metrics: {} })).not.toContain('SOC2_CC3_3');
    expect(controlsEarned('model_evaluation', { ...BARE_EVALUATION, bias_metrics: 'parity=0.1' })).not.toContain('SOC2_CC3_3');
    expect(controlsEarned('model_evaluation', { ...BARE_EVALUATION, bias_metrics: { parity: 0.1 } })).toEqual(expect.arrayContaining(bias));
  });

  it('earns CC3.3 and CC5.1 unconditionally from the other record types that map to them', () => {
    expect(controlsEarned('incident_report', {})).toContain('SOC2_CC3_3');
    expect(controlsEarned('ai_risk_assessment', {})).toContain('SOC2_CC5_1');
  });

  it('earns only unconditional controls when the payload is not an object', () => {
    expect(controlsEarned('model_evaluation', null)).toEqual(
      sorted(EXPECTED.model_evaluation.filter((id) => !['EUAIA_ART15_ROBUSTNESS', 'SOC2_CC3_3', 'SOC2_CC5_1'].includes(id))),
    );
  });

  it('earns nothing for an unknown record type', () => {
    expect(controlsEarned('risk_assessment', {})).toEqual([]);
    expect(earnableControls('nope')).toEqual([]);
  });

  it('lists the conditions of a type through earnableControls', () => {
    expect(earnableControls('model_evaluation').filter((entry) => entry.when)).toEqual([
      { control_id: 'EUAIA_ART15_ROBUSTNESS', when: { field: 'robustness_score', is: 'number' } },
      { control_id: 'SOC2_CC3_3', when: { field: 'bias_metrics', is: 'non_empty' } },
      { control_id: 'SOC2_CC5_1', when: { field: 'bias_metrics', is: 'non_empty' } },
    ]);
  });
});

describe('noteEarned', () => {
  it('keeps the latest time per control', () => {
    const coverage = new Map<string, number>();
    noteEarned(coverage, ['A', 'B'], 100);
    noteEarned(coverage, ['A'], 50);
    noteEarned(coverage, ['B'], 200);
    expect([...coverage]).toEqual([
      ['A', 100],
      ['B', 200],
    ]);
  });
});

describe('frameworkScores', () => {
  it('scores zero everywhere with no evidence, in the fixed framework order', () => {
    expect(frameworkScores(new Map(), NOW)).toEqual({
      overall_pct: 0,
      frameworks: FRAMEWORKS.map((framework) => ({ framework, score_pct: 0 })),
    });
  });

  it('scores 100 everywhere when every control is fresh', () => {
    const scores = frameworkScores(coverageOf(allIds()), NOW);
    expect(scores.overall_pct).toBe(100);
    expect(scores.frameworks.every((entry) => entry.score_pct === 100)).toBe(true);
  });

  it('rounds framework scores down', () => {
    // ISO 42001: 2 of 13 = 15.38 %; SOC 2: 1 of 17 = 5.88 %; ISO 27001: 7 of 8 = 87.5 %
    const coverage = coverageOf(['ISO42001_A2_2', 'ISO42001_A3_2', 'SOC2_CC8_1', ...allIds('iso_27001').slice(1)]);
    const byFramework = Object.fromEntries(frameworkScores(coverage, NOW).frameworks.map((entry) => [entry.framework, entry.score_pct]));
    expect(byFramework).toEqual({ eu_ai_act: 0, iso_42001: 15, soc2_type2: 5, iso_27001: 87, nist_airf: 0 });
  });

  it('weights overall_pct by controls, not by framework', () => {
    // NIST 4/4 = 100 % and nothing else: the mean of framework scores would be 20, controls-weighted is 4/52
    const scores = frameworkScores(coverageOf(allIds('nist_airf')), NOW);
    expect(scores.frameworks.find((entry) => entry.framework === 'nist_airf')!.score_pct).toBe(100);
    expect(scores.overall_pct).toBe(7);
  });

  it('no longer covers a control earned 91 days ago with a 90-day window', () => {
    expect(controlById('SOC2_CC8_1')!.freshness_days).toBe(90);
    const soc2 = (age: number): number => frameworkScores(coverageOf(['SOC2_CC8_1'], age), NOW).frameworks[2].score_pct;
    expect(soc2(90)).toBe(5);
    expect(soc2(91)).toBe(0);
    expect(frameworkScores(new Map([['SOC2_CC8_1', NOW - 90 * DAY_MS - 1]]), NOW).frameworks[2].score_pct).toBe(0);
  });

  it('keeps each control on its own window', () => {
    // EUAIA_ART14 (30 days) lapses where EUAIA_ART13 (90) and EUAIA_ART4 (365) do not
    const eu = (age: number): number => frameworkScores(coverageOf(['EUAIA_ART4', 'EUAIA_ART13', 'EUAIA_ART14'], age), NOW).frameworks[0].score_pct;
    expect(eu(30)).toBe(30);
    expect(eu(31)).toBe(20);
    expect(eu(91)).toBe(10);
    expect(eu(366)).toBe(0);
  });

  it('ignores ids that are not controls and times that are not finite', () => {
    const coverage = new Map([
      ['NOT_A_CONTROL', NOW],
      ['EUAIA_ART4', Number.NaN],
    ]);
    expect(frameworkScores(coverage, NOW).overall_pct).toBe(0);
  });

  it('lists the missing controls per framework with the records that cover them', () => {
    const missing = missingControls(coverageOf(allIds('eu_ai_act').filter((id) => id !== 'EUAIA_ART14')), NOW);
    expect(missing.eu_ai_act).toEqual([{ control_id: 'EUAIA_ART14', evidenced_by: [{ record_type: 'human_oversight' }] }]);
    expect(missing.nist_airf).toHaveLength(4);
  });
});

describe('evaluateGates', () => {
  const euBut = (...left: string[]): Map<string, number> => coverageOf(allIds('eu_ai_act').filter((id) => !left.includes(id)));

  it('returns one gate per framework in the fixed order with stable ids and names', () => {
    const gates = evaluateGates(new Map(), DEFAULT_GATE_POLICY, NOW);
    expect(gates.map((gate) => gate.gate_id)).toEqual(['gate_eu_ai_act', 'gate_iso_42001', 'gate_soc2_type2', 'gate_iso_27001', 'gate_nist_airf']);
    expect(gates.map((gate) => gate.name)).toEqual([
      'EU AI Act readiness ≥ 80%',
      'ISO/IEC 42001 readiness ≥ 70%',
      'SOC 2 Type II readiness ≥ 70%',
      'ISO/IEC 27001 readiness ≥ 70%',
      'NIST AI RMF readiness ≥ 70%',
    ]);
  });

  it('fails a required gate with exit code 2 and an advisory gate with exit code 1', () => {
    const gates = evaluateGates(new Map(), DEFAULT_GATE_POLICY, NOW);
    expect(gates.map((gate) => [gate.passing, gate.blocking, gate.exit_code])).toEqual([
      [false, true, 2],
      [false, false, 1],
      [false, false, 1],
      [false, false, 1],
      [false, false, 1],
    ]);
    expect(gatesExitCode(gates)).toBe(2);
  });

  it('passes every gate with exit code 0 and no reason when everything is covered', () => {
    const gates = evaluateGates(coverageOf(allIds()), DEFAULT_GATE_POLICY, NOW);
    for (const gate of gates) {
      expect(gate).toEqual({ gate_id: gate.gate_id, name: gate.name, passing: true, blocking: gate.blocking, exit_code: 0 });
      expect('reason' in gate).toBe(false);
    }
    expect(gatesExitCode(gates)).toBe(0);
    expect(failingGateFrameworks(gates)).toEqual([]);
  });

  it('passes a gate whose score equals its threshold', () => {
    const [eu] = evaluateGates(euBut('EUAIA_ART14', 'EUAIA_ART15_ROBUSTNESS'), DEFAULT_GATE_POLICY, NOW); // 8/10 = 80 %
    expect(eu).toMatchObject({ passing: true, exit_code: 0 });
  });

  it('says the score, the threshold and the records that would close the gap', () => {
    const policy = mergeGatePolicy(DEFAULT_GATE_POLICY, { eu_ai_act: { threshold: 90 } });
    const [eu] = evaluateGates(euBut('EUAIA_ART14', 'EUAIA_ART15_ROBUSTNESS'), policy, NOW);
    expect(eu).toEqual({
      gate_id: 'gate_eu_ai_act',
      name: 'EU AI Act readiness ≥ 90%',
      passing: false,
      blocking: true,
      exit_code: 2,
      reason: '80% < 90%: record human_oversight, model_evaluation (robustness_score) to cover EUAIA_ART14, EUAIA_ART15_ROBUSTNESS',
    });
  });

  it('names one record type for several controls it covers', () => {
    const coverage = coverageOf(allIds().filter((id) => !['EUAIA_ART13', 'EUAIA_ART14'].includes(id)));
    const [eu] = evaluateGates(coverage, mergeGatePolicy(DEFAULT_GATE_POLICY, { eu_ai_act: { threshold: 100 } }), NOW);
    expect(eu.reason).toBe('80% < 100%: record human_oversight to cover EUAIA_ART13, EUAIA_ART14');
  });

  it('names the bias field when only an evaluation with bias metrics closes the gap', () => {
    const coverage = coverageOf(allIds('soc2_type2').filter((id) => id !== 'SOC2_CC5_1'));
    const policy = mergeGatePolicy(DEFAULT_GATE_POLICY, { soc2_type2: { threshold: 100, mode: 'required' } });
    const soc2 = evaluateGates(coverage, policy, NOW)[2];
    expect(soc2).toMatchObject({ passing: false, blocking: true, exit_code: 2 });
    // ai_risk_assessment earns CC5.1 unconditionally, so it wins the tie over model_evaluation (bias_metrics)
    expect(soc2.reason).toBe('94% < 100%: record ai_risk_assessment to cover SOC2_CC5_1');
  });

  it('puts reasons only on failing gates and names record types in them', () => {
    const gates = evaluateGates(coverageOf(allIds('nist_airf')), DEFAULT_GATE_POLICY, NOW);
    for (const gate of gates) {
      if (gate.passing) expect(gate.reason).toBeUndefined();
      else expect(gate.reason).toMatch(/^0% < (80|70)%: record [a-z_]+/);
    }
    const eu = gates[0].reason!;
    for (const type of [
      'ai_risk_assessment',
      'model_evaluation (robustness_score)',
      'human_oversight',
      'training_data_governance',
      'incident_report',
      'model_drift_event',
      'policy_acknowledged',
    ]) {
      expect(eu).toContain(type);
    }
    for (const id of allIds('eu_ai_act')) expect(eu).toContain(id);
  });

  it('follows the policy mode and threshold per framework', () => {
    const policy: GatePolicy = mergeGatePolicy(DEFAULT_GATE_POLICY, {
      eu_ai_act: { mode: 'advisory' },
      nist_airf: { mode: 'required', threshold: 0 },
      iso_27001: { mode: 'required' },
    });
    const gates = evaluateGates(new Map(), policy, NOW);
    expect(gates.map((gate) => gate.exit_code)).toEqual([1, 1, 1, 2, 0]);
    expect(gates[4]).toMatchObject({ passing: true, blocking: true, name: 'NIST AI RMF readiness ≥ 0%' });
    expect(failingGateFrameworks(gates)).toEqual(['eu_ai_act', 'iso_42001', 'soc2_type2', 'iso_27001']);
  });

  it('lets a control lapse out of a gate when its window passes', () => {
    const coverage = coverageOf(allIds('eu_ai_act'));
    coverage.set('EUAIA_ART14', NOW - 31 * DAY_MS); // 30-day window
    coverage.set('EUAIA_ART9', NOW - 91 * DAY_MS); // 90-day window
    const [eu] = evaluateGates(coverage, mergeGatePolicy(DEFAULT_GATE_POLICY, { eu_ai_act: { threshold: 81 } }), NOW);
    expect(eu.reason).toBe('80% < 81%: record ai_risk_assessment, human_oversight to cover EUAIA_ART9, EUAIA_ART14');
  });
});

describe('gate policy', () => {
  it('defaults to a blocking EU AI Act gate at 80 % and advisory gates at 70 %', () => {
    expect(DEFAULT_GATE_POLICY).toEqual({
      eu_ai_act: { mode: 'required', threshold: 80 },
      iso_42001: { mode: 'advisory', threshold: 70 },
      soc2_type2: { mode: 'advisory', threshold: 70 },
      iso_27001: { mode: 'advisory', threshold: 70 },
      nist_airf: { mode: 'advisory', threshold: 70 },
    });
  });

  it('merges a partial policy per key', () => {
    const merged = mergeGatePolicy(DEFAULT_GATE_POLICY, { soc2_type2: { mode: 'required' }, nist_airf: { threshold: 50 } });
    expect(merged.soc2_type2).toEqual({ mode: 'required', threshold: 70 });
    expect(merged.nist_airf).toEqual({ mode: 'advisory', threshold: 50 });
    expect(merged.eu_ai_act).toEqual(DEFAULT_GATE_POLICY.eu_ai_act);
  });

  it('reports every bad entry of a submitted policy with a dotted path', () => {
    expect(validateGatePolicy({ eu_ai_act: { mode: 'required', threshold: 80 } })).toEqual([]);
    expect(
      validateGatePolicy({
        gdpr: {},
        eu_ai_act: { mode: 'blocking', threshold: 101 },
        iso_42001: { threshold: '70' },
        nist_airf: 5,
        soc2_type2: { mode: 'advisory', level: 1 },
      }),
    ).toEqual([
      { path: 'policy.gdpr', code: 'enum', message: 'must be one of: eu_ai_act, iso_42001, soc2_type2, iso_27001, nist_airf' },
      { path: 'policy.eu_ai_act.mode', code: 'enum', message: 'must be one of: required, advisory' },
      { path: 'policy.eu_ai_act.threshold', code: 'range', message: 'must be between 0 and 100' },
      { path: 'policy.iso_42001.threshold', code: 'type', message: 'must be a number' },
      { path: 'policy.nist_airf', code: 'type', message: 'must be an object { mode, threshold }' },
      { path: 'policy.soc2_type2.level', code: 'rule', message: 'unknown key (expected mode, threshold)' },
    ]);
    expect(validateGatePolicy([], '')).toEqual([{ path: '', code: 'type', message: 'must be an object of framework → { mode, threshold }' }]);
  });
});

describe('deriveControls', () => {
  const priorities = (description: string, tier: string): Record<string, string> =>
    Object.fromEntries(deriveControls(description, tier).map((entry) => [entry.record_type, entry.priority]));

  it('accepts exactly the four risk tiers', () => {
    expect(RISK_TIERS).toEqual(['unacceptable', 'high', 'limited', 'minimal']);
    expect(isRiskTier('high')).toBe(true);
    expect(isRiskTier('High')).toBe(false);
    expect(() => deriveControls('x', 'medium')).toThrow(RangeError);
    expect(() => deriveControls('x', 'medium')).toThrow(/expected one of: unacceptable, high, limited, minimal/);
  });

  it('requires the Chapter III evidence for a high-risk system', () => {
    expect(priorities('', 'high')).toEqual({
      ai_risk_assessment: 'required',
      human_oversight: 'required',
      incident_report: 'required',
      model_drift_event: 'required',
      model_evaluation: 'required',
      training_data_governance: 'required',
      change_event: 'recommended',
      governance_review: 'recommended',
      policy_acknowledged: 'recommended',
      access_review: 'optional',
      vendor_risk: 'optional',
    });
  });

  it('requires a risk assessment and recommends evaluation and oversight for a limited-risk system', () => {
    expect(priorities('', 'limited')).toEqual({
      ai_risk_assessment: 'required',
      human_oversight: 'recommended',
      incident_report: 'recommended',
      model_evaluation: 'recommended',
      change_event: 'optional',
      governance_review: 'optional',
      model_drift_event: 'optional',
      policy_acknowledged: 'optional',
      training_data_governance: 'optional',
    });
  });

  it('recommends a risk assessment for a minimal-risk system and little else', () => {
    expect(priorities('', 'minimal')).toEqual({
      ai_risk_assessment: 'recommended',
      governance_review: 'optional',
      model_evaluation: 'optional',
      policy_acknowledged: 'optional',
    });
  });

  it('recommends every record type for an unacceptable-risk system', () => {
    const result = priorities('', 'unacceptable');
    expect(Object.keys(result).sort()).toEqual([...RECORD_TYPES].sort());
    expect(result.governance_review).toBe('required');
  });

  it('always includes governance_review and policy_acknowledged', () => {
    for (const tier of RISK_TIERS) {
      const result = priorities('', tier);
      expect(result.governance_review).toBeDefined();
      expect(result.policy_acknowledged).toBeDefined();
    }
  });

  it('raises priorities for Annex III uses such as credit and hiring', () => {
    for (const description of ['Scores consumer LOAN applications', 'Ranks candidates for hiring', 'Biometric door access', 'Triage for medical imaging']) {
      const result = priorities(description, 'minimal');
      expect(result).toMatchObject({
        ai_risk_assessment: 'required',
        model_evaluation: 'required',
        human_oversight: 'required',
        training_data_governance: 'required',
      });
    }
  });

  it('adds vendor_risk for third-party models, change_event for delivery, access_review for personal data', () => {
    expect(priorities('Summarises tickets with the OpenAI API', 'minimal').vendor_risk).toBe('recommended');
    expect(priorities('Uses a third-party model', 'minimal').vendor_risk).toBe('recommended');
    expect(priorities('Deployed from our CI pipeline on every release', 'minimal').change_event).toBe('recommended');
    expect(priorities('Processes customer PII', 'minimal')).toMatchObject({ access_review: 'recommended', training_data_governance: 'recommended' });
  });

  it('matches whole words only, ignoring case and punctuation and allowing plurals', () => {
    expect(matchedKeywordRules('A decision capital citation')).toEqual([]); // ci, api, cd inside words
    expect(matchedKeywordRules('THIRD-PARTY vendors; APIs.')).toEqual(['third_party']);
    expect(matchedKeywordRules('fine-tuned on customer loans')).toEqual(['high_impact_use', 'personal_data', 'model_training']);
  });

  it('never lowers a tier priority with a keyword', () => {
    expect(priorities('uses a vendor API', 'high').ai_risk_assessment).toBe('required');
    expect(priorities('Internal chatbot', 'high').human_oversight).toBe('required');
  });

  it('orders required, recommended, optional, then by record type, with every control the type can earn', () => {
    const result = deriveControls('Credit scoring via a vendor API, deployed in production, trained on customer data', 'limited');
    const rank = { required: 0, recommended: 1, optional: 2 };
    for (let i = 1; i < result.length; i += 1) {
      const [a, b] = [result[i - 1], result[i]];
      expect(rank[a.priority] < rank[b.priority] || (a.priority === b.priority && a.record_type < b.record_type)).toBe(true);
    }
    for (const entry of result) expect(entry.controls).toEqual(sorted(EXPECTED[entry.record_type]));
  });

  it('gives the same answer for the same input', () => {
    const description = 'LLM assistant for loan officers, hosted by a vendor, released through CI';
    for (const tier of RISK_TIERS) expect(deriveControls(description, tier)).toEqual(deriveControls(description, tier));
    expect(deriveControls('Loan officer assistant', 'limited')).toEqual(deriveControls('  loan-officer   ASSISTANT!', 'limited'));
  });

  it('keeps a rule for every tier', () => {
    expect(Object.keys(DERIVE_TIER_RULES)).toEqual([...RISK_TIERS]);
  });
});
