/**
 * Gates (docs/service.md "GET …/grc/gates/check", docs/controls.md): one per framework, in the fixed framework order. A gate passes
 * when the framework score reaches its threshold. A failing `required` gate is blocking
 * (exit_code 2), a failing `advisory` one is not (exit_code 1); a passing gate has exit_code 0 and
 * no reason. The reason of a failing gate names the score, the threshold and the records that
 * would cover the missing controls. See docs/controls.md for the defaults.
 */
import { isPlainObject } from '../canonical-json.js';
import { FRAMEWORKS, type Framework, type RecordType, type ValidationIssue } from '../records/types.js';
import { frameworkName } from './catalogue.js';
import { coverageByFramework, type Coverage, type FrameworkCoverage, type MissingControl } from './posture.js';

export const GATE_MODES = ['required', 'advisory'] as const;
export type GateMode = (typeof GATE_MODES)[number];

export interface GateRule {
  readonly mode: GateMode;
  /** percent from 0 to 100; the gate passes when `score_pct ≥ threshold` */
  readonly threshold: number;
}

/** Per framework, how its gate is judged. Configurable per workspace. */
export type GatePolicy = Readonly<Record<Framework, GateRule>>;

/**
 * The default policy: the EU AI Act gate blocks below 80 %; the other four advise below 70 %.
 * (docs/decisions.md, "Gates: EU AI Act blocks, the rest advise; every gate always listed".)
 */
export const DEFAULT_GATE_POLICY: GatePolicy = Object.freeze({
  eu_ai_act: Object.freeze({ mode: 'required', threshold: 80 }),
  iso_42001: Object.freeze({ mode: 'advisory', threshold: 70 }),
  soc2_type2: Object.freeze({ mode: 'advisory', threshold: 70 }),
  iso_27001: Object.freeze({ mode: 'advisory', threshold: 70 }),
  nist_airf: Object.freeze({ mode: 'advisory', threshold: 70 }),
});

/** A gate result, exactly the wire shape of docs/service.md "GET …/grc/gates/check". `reason` is present only when failing. */
export interface Gate {
  gate_id: string;
  name: string;
  passing: boolean;
  blocking: boolean;
  exit_code: 0 | 1 | 2;
  reason?: string;
}

const GATE_PREFIX = 'gate_';
const gateFrameworks: ReadonlyMap<string, Framework> = new Map(FRAMEWORKS.map((framework) => [`${GATE_PREFIX}${framework}`, framework]));

/** The gate id of a framework, e.g. `gate_eu_ai_act`. */
export function gateId(framework: Framework): string {
  return `${GATE_PREFIX}${framework}`;
}

/** The framework of a gate id, or `undefined` for an id that is not a framework gate. */
export function gateFramework(id: string): Framework | undefined {
  return gateFrameworks.get(id);
}

/**
 * Picks a small set of record types that together cover every missing control: greedily the type
 * covering the most still-missing controls, ties broken by fewer payload conditions, then by
 * record-type name. Returns the picks in order with the controls each covers and the payload
 * fields it needs for them.
 */
export function evidenceToClose(missing: readonly MissingControl[]): { record_type: RecordType; fields: string[]; controls: string[] }[] {
  const left = new Set(missing.map((entry) => entry.control_id));
  const picks: { record_type: RecordType; fields: string[]; controls: string[] }[] = [];
  while (left.size > 0) {
    // per record type: the still-missing controls it covers, and the fields their conditions need
    const candidates = new Map<RecordType, { controls: string[]; fields: Set<string> }>();
    for (const entry of missing) {
      if (!left.has(entry.control_id)) continue;
      for (const rule of entry.evidenced_by) {
        let candidate = candidates.get(rule.record_type);
        if (!candidate) candidates.set(rule.record_type, (candidate = { controls: [], fields: new Set() }));
        candidate.controls.push(entry.control_id);
        if (rule.when) candidate.fields.add(rule.when.field);
      }
    }
    let best: [RecordType, { controls: string[]; fields: Set<string> }] | undefined;
    for (const entry of candidates) {
      if (
        best === undefined ||
        entry[1].controls.length > best[1].controls.length ||
        (entry[1].controls.length === best[1].controls.length &&
          (entry[1].fields.size < best[1].fields.size || (entry[1].fields.size === best[1].fields.size && entry[0] < best[0])))
      ) {
        best = entry;
      }
    }
    if (best === undefined) break; // a control nothing can earn (the loader forbids it)
    for (const id of best[1].controls) left.delete(id);
    picks.push({ record_type: best[0], fields: [...best[1].fields].sort(), controls: best[1].controls });
  }
  return picks;
}

function failureReason(entry: FrameworkCoverage, threshold: number): string {
  const picks = evidenceToClose(entry.missing);
  const records = picks.map((pick) => (pick.fields.length > 0 ? `${pick.record_type} (${pick.fields.join(', ')})` : pick.record_type));
  const controls = picks.flatMap((pick) => pick.controls);
  return `${entry.score_pct}% < ${threshold}%: record ${records.join(', ')} to cover ${controls.join(', ')}`;
}

function gateFor(entry: FrameworkCoverage, rule: GateRule): Gate {
  const blocking = rule.mode === 'required';
  const gate: Gate = {
    gate_id: gateId(entry.framework),
    name: `${frameworkName(entry.framework)} readiness ≥ ${rule.threshold}%`,
    passing: entry.score_pct >= rule.threshold,
    blocking,
    exit_code: 0,
  };
  if (!gate.passing) {
    gate.exit_code = blocking ? 2 : 1;
    gate.reason = failureReason(entry, rule.threshold);
  }
  return gate;
}

/**
 * The gates at `nowMs` under `policy`, one per framework in the fixed framework order.
 *
 * @example evaluateGates(new Map(), DEFAULT_GATE_POLICY, now)[0]
 * // { gate_id: 'gate_eu_ai_act', name: 'EU AI Act readiness ≥ 80%', passing: false, blocking: true, exit_code: 2,
 * //   reason: '0% < 80%: record ai_risk_assessment, human_oversight, … to cover EUAIA_ART11, EUAIA_ART9, …' }
 */
export function evaluateGates(coverage: Coverage, policy: GatePolicy, nowMs: number): Gate[] {
  return gatesFrom(coverageByFramework(coverage, nowMs), policy);
}

/** The gates from already computed coverage (so posture and gates can share one pass). */
export function gatesFrom(byFramework: readonly FrameworkCoverage[], policy: GatePolicy = DEFAULT_GATE_POLICY): Gate[] {
  return byFramework.map((entry) => gateFor(entry, policy[entry.framework] ?? DEFAULT_GATE_POLICY[entry.framework]));
}

/** The framework slugs of the failing gates, for the posture brief's `failing_gates`. */
export function failingGateFrameworks(gates: readonly Gate[]): Framework[] {
  const out: Framework[] = [];
  for (const gate of gates) {
    const framework = gateFramework(gate.gate_id);
    if (!gate.passing && framework !== undefined) out.push(framework);
  }
  return out;
}

/** The process exit code of a gate check: the highest gate exit code (0 when there are none). */
export function gatesExitCode(gates: readonly Gate[]): 0 | 1 | 2 {
  let code: 0 | 1 | 2 = 0;
  for (const gate of gates) if (gate.exit_code > code) code = gate.exit_code;
  return code;
}

/**
 * Checks a (partial) gate policy as stored or submitted: an object of framework →
 * `{ mode?, threshold? }`, modes `required`/`advisory`, thresholds numbers from 0 to 100.
 * Returns every problem with a dotted path under `prefix`.
 */
export function validateGatePolicy(value: unknown, prefix = 'policy'): ValidationIssue[] {
  const join = (key: string): string => (prefix === '' ? key : `${prefix}.${key}`);
  if (!isPlainObject(value)) return [{ path: prefix, code: 'type', message: 'must be an object of framework → { mode, threshold }' }];
  const issues: ValidationIssue[] = [];
  for (const [framework, rule] of Object.entries(value)) {
    const path = join(framework);
    if (!FRAMEWORKS.includes(framework as Framework)) {
      issues.push({ path, code: 'enum', message: `must be one of: ${FRAMEWORKS.join(', ')}` });
      continue;
    }
    if (!isPlainObject(rule)) {
      issues.push({ path, code: 'type', message: 'must be an object { mode, threshold }' });
      continue;
    }
    for (const key of Object.keys(rule)) {
      if (key !== 'mode' && key !== 'threshold') issues.push({ path: `${path}.${key}`, code: 'rule', message: 'unknown key (expected mode, threshold)' });
    }
    if (rule.mode !== undefined && !GATE_MODES.includes(rule.mode as GateMode)) {
      issues.push({ path: `${path}.mode`, code: 'enum', message: `must be one of: ${GATE_MODES.join(', ')}` });
    }
    if (rule.threshold !== undefined) {
      if (typeof rule.threshold !== 'number' || !Number.isFinite(rule.threshold)) {
        issues.push({ path: `${path}.threshold`, code: 'type', message: 'must be a number' });
      } else if (rule.threshold < 0 || rule.threshold > 100) {
        issues.push({ path: `${path}.threshold`, code: 'range', message: 'must be between 0 and 100' });
      }
    }
  }
  return issues;
}

/**
 * A full policy from `base` with a partial policy laid over it, per framework and per key.
 * The partial must have passed {@link validateGatePolicy}.
 *
 * @example mergeGatePolicy(DEFAULT_GATE_POLICY, { soc2_type2: { mode: 'required' } }).soc2_type2 // { mode: 'required', threshold: 70 }
 */
export function mergeGatePolicy(base: GatePolicy, partial: Partial<Record<Framework, Partial<GateRule>>>): GatePolicy {
  const out = {} as Record<Framework, GateRule>;
  for (const framework of FRAMEWORKS) {
    const over = partial[framework];
    out[framework] = Object.freeze({
      mode: over?.mode ?? base[framework].mode,
      threshold: over?.threshold ?? base[framework].threshold,
    });
  }
  return Object.freeze(out);
}
