/**
 * The record-type catalogue and its validation, for all 11 record types: a valid record of each
 * type is built from the client library's inputs; then every required field is removed, every
 * enum broken and every kind violated in turn, and the dotted path of each problem is checked.
 */
import { describe, expect, it } from 'vitest';
import {
  CATALOGUE,
  RECORD_TYPES,
  buildRecord,
  isRecordType,
  partsFromInputs,
  policyResource,
  recordTypeSpec,
  validatePayload,
  validateRecord,
  type FieldSpec,
  type RecordType,
} from '../../src/core/records/index.js';
import { JsonFloat } from '../../src/core/canonical-json.js';
import { EXPECTED, SYSTEM, VALID_INPUTS } from '../client/fixtures/record-inputs.js';

const NOW = new Date('2026-02-01T10:00:00.000Z');
const specs = [...CATALOGUE.values()];
const inputsOf = (type: RecordType) => VALID_INPUTS[recordTypeSpec(type).method as keyof typeof VALID_INPUTS] as unknown as Record<string, unknown>;

/** A record built the way the client builds it. */
function build(type: RecordType, inputs: Record<string, unknown> = inputsOf(type)) {
  const spec = recordTypeSpec(type);
  const parts = partsFromInputs(type, inputs);
  const systemName = spec.systemFromInput ? (inputs[spec.systemFromInput] as string) : SYSTEM;
  return buildRecord(type, { ...parts, systemName }, () => NOW);
}

function validRecord(type: RecordType) {
  const built = build(type);
  if (!built.ok) throw new Error(`fixture for ${type} is invalid: ${JSON.stringify(built.issues)}`);
  return built.record;
}

const paths = (issues: readonly { path: string }[]) => issues.map((found) => found.path).sort();

/** A value of the wrong kind for a field. */
function wrongKind(field: FieldSpec): unknown {
  switch (field.kind) {
    case 'string':
    case 'date':
    case 'datetime':
      return 42;
    case 'number':
    case 'integer':
      return 'many';
    case 'boolean':
      return 'yes';
    case 'string[]':
      return 'not-a-list';
    case 'number-map':
      return ['not', 'a', 'map'];
  }
}

describe('the catalogue', () => {
  it('has exactly the 11 record types of docs/service.md "Record payloads", in its order', () => {
    expect(RECORD_TYPES).toEqual([
      'ai_risk_assessment',
      'governance_review',
      'model_evaluation',
      'training_data_governance',
      'human_oversight',
      'incident_report',
      'change_event',
      'access_review',
      'vendor_risk',
      'model_drift_event',
      'policy_acknowledged',
    ]);
    expect([...CATALOGUE.keys()]).toEqual([...RECORD_TYPES]);
  });

  it('names methods, wire keys and inputs consistently', () => {
    for (const spec of specs) {
      expect(spec.method).toMatch(/^[a-z][A-Za-z0-9]*$/);
      expect(spec.type.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase())).toBe(spec.method);
      for (const field of spec.fields) {
        expect(field.wire).toMatch(/^[a-z][a-z0-9_]*$/);
        expect(field.input).toMatch(/^[a-z][A-Za-z0-9]*$/);
        if (field.enum && field.default !== undefined) expect(field.enum).toContain(field.default);
      }
      expect(new Set(spec.fields.map((field) => field.wire)).size).toBe(spec.fields.length);
      expect(new Set(spec.fields.map((field) => field.input)).size).toBe(spec.fields.length);
    }
  });

  it('knows its types', () => {
    expect(isRecordType('vendor_risk')).toBe(true);
    expect(isRecordType('vendor_risks')).toBe(false);
    expect(isRecordType(3)).toBe(false);
    expect(() => recordTypeSpec('nope' as RecordType)).toThrow();
  });
});

describe.each(RECORD_TYPES)('%s', (type) => {
  const spec = recordTypeSpec(type);
  const method = spec.method as keyof typeof EXPECTED;

  it('builds the wire record of docs/service.md "Record payloads" from the client inputs', () => {
    const record = validRecord(type);
    const { occurred_at, ...rest } = record;
    expect(rest).toEqual(EXPECTED[method]);
    expect(occurred_at).toBe(type === 'incident_report' ? '2026-02-01T09:30:00Z' : NOW.toISOString());
    expect(validateRecord(record)).toEqual([]);
  });

  it('omits unset optional keys rather than sending null, except those the client fills (a default, or derived)', () => {
    const record = validRecord(type);
    for (const value of Object.values(record.payload)) expect(value).not.toBeNull();
    for (const field of spec.fields.filter((candidate) => !candidate.required)) {
      if (field.input in inputsOf(type)) continue;
      const { [field.wire]: _unset, ...rest } = record.payload;
      spec.derivePayload?.(rest);
      if (field.default !== undefined) expect(record.payload[field.wire]).toEqual(field.default);
      else if (rest[field.wire] !== undefined) expect(record.payload[field.wire]).toEqual(rest[field.wire]);
      else expect(record.payload).not.toHaveProperty(field.wire);
    }
  });

  it('accepts a record without the payload members that are optional on the wire (stored exactly as sent)', () => {
    // the members the client fills when not given (a default, or derived) but the wire does not require
    const { payload } = validRecord(type);
    const filled = new Set(
      spec.fields.filter((field) => !field.required && (field.default !== undefined || field.wire === 'override')).map((field) => field.wire),
    );
    const bare = Object.fromEntries(Object.entries(payload).filter(([wire]) => !filled.has(wire)));
    expect(validateRecord({ ...validRecord(type), payload: bare })).toEqual([]);
  });

  it.each(spec.fields.filter((field) => field.required).map((field) => [field.wire, field] as const))('reports payload.%s when it is missing', (wire) => {
    const { [wire]: _removed, ...payload } = validRecord(type).payload;
    const issues = validateRecord({ ...validRecord(type), payload });
    expect(paths(issues)).toEqual([`payload.${wire}`]);
    expect(issues[0].code).toBe('required');
  });

  it.each(spec.fields.filter((field) => field.enum).map((field) => [field.wire, field] as const))(
    'reports payload.%s when it is outside its enum',
    (wire, field) => {
      const record = validRecord(type);
      const bad = field.kind === 'string[]' ? ['surely-not-a-member'] : 'surely-not-a-member';
      const issues = validateRecord({ ...record, payload: { ...record.payload, [wire]: bad } });
      expect(paths(issues)).toEqual([field.kind === 'string[]' ? `payload.${wire}.0` : `payload.${wire}`]);
      expect(issues[0].code).toBe('enum');
    },
  );

  it('reports every field of the wrong kind at once, with dotted paths', () => {
    const record = validRecord(type);
    const payload = { ...record.payload };
    for (const field of spec.fields) payload[field.wire] = wrongKind(field);
    const issues = validatePayload(spec, payload);
    expect(paths(issues)).toEqual(spec.fields.map((field) => `payload.${field.wire}`).sort());
  });

  it('reports a missing payload, a bad environment, occurred_at and system_name together', () => {
    const { payload: _payload, ...record } = validRecord(type);
    const issues = validateRecord({ ...record, system_name: '', environment: 'prod', occurred_at: 'yesterday' });
    expect(paths(issues)).toEqual(['environment', 'occurred_at', 'payload', 'system_name']);
  });

  it('reports every required input missing when built from nothing', () => {
    const built = buildRecord(type, { payload: {}, systemName: SYSTEM }, () => NOW);
    expect(built.ok).toBe(false);
    if (built.ok) return;
    // human_oversight's override cannot be inferred without the two decisions, so it is missing too.
    const required = spec.fields.filter((field) => field.required && field.default === undefined).map((field) => `payload.${field.wire}`);
    const topRequired = spec.topInputs.filter((input) => input.required).map((input) => input.input);
    expect(paths(built.issues)).toEqual([...required, ...topRequired].sort());
  });

  it('keeps unknown payload keys (they earn nothing)', () => {
    const record = validRecord(type);
    expect(validateRecord({ ...record, payload: { ...record.payload, extra_key: 'kept' } })).toEqual([]);
  });
});

describe('rules and defaults', () => {
  it('requires an Annex III category for a high-risk assessment, but not for a limited one', () => {
    const { annexIiiCategory: _omitted, ...input } = inputsOf('ai_risk_assessment');
    const high = build('ai_risk_assessment', input);
    expect(high.ok).toBe(false);
    if (!high.ok) expect(high.issues).toEqual([expect.objectContaining({ path: 'payload.annex_iii_category', code: 'rule' })]);
    expect(build('ai_risk_assessment', { ...input, riskLevel: 'limited' }).ok).toBe(true);
  });

  it('never defaults art5_self_assessment', () => {
    const { art5SelfAssessment: _omitted, ...input } = inputsOf('ai_risk_assessment');
    const built = build('ai_risk_assessment', input);
    expect(built.ok).toBe(false);
    if (!built.ok) expect(paths(built.issues)).toEqual(['payload.art5_self_assessment']);
  });

  it('takes the assessed system from the input, not the configured one', () => {
    const built = build('ai_risk_assessment', { ...inputsOf('ai_risk_assessment'), systemName: 'other-system' });
    expect(built.ok && built.record.system_name).toBe('other-system');
    expect(built.ok && built.record.resource).toBe('other-system');
  });

  it('infers human_oversight override from the decisions unless given', () => {
    const same = build('human_oversight', { ...inputsOf('human_oversight'), finalDecision: 'decline' });
    expect(same.ok && same.record.payload.override).toBe(false);
    const given = build('human_oversight', { ...inputsOf('human_oversight'), override: false });
    expect(given.ok && given.record.payload.override).toBe(false);
  });

  it('applies the defaults of docs/service.md "Record payloads"', () => {
    expect(validRecord('model_evaluation').payload.evaluation_type).toBe('quarterly');
    expect(validRecord('vendor_risk').payload.findings).toBe(0);
    expect(validRecord('governance_review').payload.action_items).toBe(4);
    expect(validRecord('policy_acknowledged').payload).toMatchObject({ decision: 'acknowledged', acknowledgment_type: 'initial', channel: 'in-app' });
    expect(validRecord('model_drift_event').payload.drift_type).toBe('performance');
    expect(validRecord('access_review').payload.review_type).toBe('offboarding');
    expect(validRecord('ai_risk_assessment').environment).toBe('production');
  });

  it('does not let the client override policy_acknowledged decision', () => {
    const built = build('policy_acknowledged', { ...inputsOf('policy_acknowledged'), decision: 'declined' });
    expect(built.ok && built.record.payload.decision).toBe('acknowledged');
  });

  it('writes the policy resource as policy:<slug>:<version>', () => {
    expect(policyResource('  AI   Acceptable Use ', '2.0')).toBe('policy:ai-acceptable-use:2.0');
  });

  it('checks ranges', () => {
    const review = validRecord('governance_review');
    const issues = validateRecord({ ...review, payload: { ...review.payload, overall_readiness: 101, action_items: -1 } });
    expect(paths(issues)).toEqual(['payload.action_items', 'payload.overall_readiness']);
    expect(issues.every((found) => found.code === 'range')).toBe(true);
  });

  it('requires whole numbers for integer fields, and accepts big integers and floats from lossless JSON', () => {
    const training = validRecord('training_data_governance');
    expect(paths(validateRecord({ ...training, payload: { ...training.payload, record_count: 1.5 } }))).toEqual(['payload.record_count']);
    expect(validateRecord({ ...training, payload: { ...training.payload, record_count: 12345678901234567890n } })).toEqual([]);
    const evaluation = validRecord('model_evaluation');
    expect(validateRecord({ ...evaluation, payload: { ...evaluation.payload, accuracy: new JsonFloat(85) } })).toEqual([]);
  });

  it('names the bad entry of an array and of a number map', () => {
    const training = validRecord('training_data_governance');
    expect(paths(validateRecord({ ...training, payload: { ...training.payload, data_sources: ['ok', 7] } }))).toEqual(['payload.data_sources.1']);
    const evaluation = validRecord('model_evaluation');
    expect(paths(validateRecord({ ...evaluation, payload: { ...evaluation.payload, bias_metrics: { parity: 'low' } } }))).toEqual([
      'payload.bias_metrics.parity',
    ]);
  });

  it('requires non-empty required arrays', () => {
    const incident = validRecord('incident_report');
    expect(paths(validateRecord({ ...incident, payload: { ...incident.payload, affected_systems: [] } }))).toEqual(['payload.affected_systems']);
  });

  it('checks dates and date-times', () => {
    const vendor = validRecord('vendor_risk');
    expect(paths(validateRecord({ ...vendor, payload: { ...vendor.payload, last_reviewed: '15/01/2026' } }))).toEqual(['payload.last_reviewed']);
    const incident = validRecord('incident_report');
    expect(paths(validateRecord({ ...incident, payload: { ...incident.payload, authority_notified_at: '2026-02-01' } }))).toEqual([
      'payload.authority_notified_at',
    ]);
    const built = build('incident_report', { ...inputsOf('incident_report'), detectedAt: 'this morning' });
    expect(built.ok).toBe(false);
    if (!built.ok) expect(paths(built.issues)).toEqual(['detectedAt', 'occurred_at']);
  });

  it('checks client_sig and its algorithm together', () => {
    const record = validRecord('vendor_risk');
    expect(paths(validateRecord({ ...record, client_sig: 'abc', client_sig_algo: 'sha1' }))).toEqual(['client_sig', 'client_sig_algo']);
    expect(paths(validateRecord({ ...record, client_sig_algo: 'hmac-sha256' }))).toEqual(['client_sig']);
    expect(validateRecord({ ...record, client_sig: 'ab'.repeat(32), client_sig_algo: 'hmac-sha256' })).toEqual([]);
  });

  it('reports an unknown record type and a record that is not an object', () => {
    expect(paths(validateRecord({ ...validRecord('vendor_risk'), record_type: 'vendor_risks' }))).toEqual(['record_type']);
    expect(validateRecord([1, 2])).toEqual([expect.objectContaining({ path: '', code: 'type' })]);
  });
});
