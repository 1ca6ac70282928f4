/**
 * Record → controls: the `mapped_controls` of a GRC record (docs/service.md "POST …/grc/evidence", docs/controls.md), read from the
 * control catalogue. Pure and deterministic.
 */
import { isJsonNumber } from '../canonical-json.js';
import { isRecordType } from '../records/catalogue.js';
import { isPlainObject } from '../canonical-json.js';
import { RECORD_TYPES, type RecordType } from '../records/types.js';
import { CONTROLS, type EvidenceCondition, type EvidenceRule } from './catalogue.js';

/** A control a record type can earn, and the condition (if any) under which it does. */
export interface EarnableControl {
  readonly control_id: string;
  readonly when?: EvidenceCondition;
}

/**
 * The order of control ids in `mapped_controls` (and of the record types and controls the service
 * lists per system): code-point order, the same as Python's `sorted()` and PostgreSQL's
 * COLLATE "C" on these ASCII ids.
 */
export function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const earnable: ReadonlyMap<RecordType, readonly EarnableControl[]> = new Map(
  RECORD_TYPES.map((type) => {
    const list: EarnableControl[] = [];
    for (const control of CONTROLS) {
      const rule: EvidenceRule | undefined = control.evidenced_by.find((candidate) => candidate.record_type === type);
      if (rule) list.push(rule.when ? { control_id: control.id, when: rule.when } : { control_id: control.id });
    }
    list.sort((a, b) => byCodePoint(a.control_id, b.control_id));
    return [type, Object.freeze(list)];
  }),
);

/** Whether a payload satisfies a catalogue condition. */
export function conditionHolds(condition: EvidenceCondition, payload: unknown): boolean {
  if (!isPlainObject(payload)) return false;
  const value = payload[condition.field];
  switch (condition.is) {
    case 'number':
      // finite number, bigint or JsonFloat (a lexeme like `0.90` read losslessly)
      return isJsonNumber(value);
    case 'non_empty':
      return Array.isArray(value) ? value.length > 0 : isPlainObject(value) && Object.keys(value).length > 0;
  }
}

/**
 * Every control a record type can earn, with its condition, sorted by control id.
 * Empty for an unknown record type.
 */
export function earnableControls(recordType: string): readonly EarnableControl[] {
  return isRecordType(recordType) ? earnable.get(recordType)! : [];
}

/**
 * The controls a record of this type and payload earns (its `mapped_controls`), sorted by control
 * id in code-point order. An unknown record type earns nothing.
 *
 * @example controlsEarned('change_event', {...}) // ['ISO27001_A8_32', 'ISO42001_A6_2', 'SOC2_CC8_1']
 */
export function controlsEarned(recordType: string, payload: unknown): string[] {
  const out: string[] = [];
  for (const entry of earnableControls(recordType)) {
    if (entry.when === undefined || conditionHolds(entry.when, payload)) out.push(entry.control_id);
  }
  return out;
}

/**
 * Folds a record's earned controls into a coverage map (control id → latest epoch ms it was
 * earned), keeping the latest time per control. This is the whole state posture needs.
 */
export function noteEarned(coverage: Map<string, number>, controlIds: Iterable<string>, atMs: number): void {
  for (const id of controlIds) {
    const previous = coverage.get(id);
    if (previous === undefined || atMs > previous) coverage.set(id, atMs);
  }
}
