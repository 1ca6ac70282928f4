/**
 * The control catalogue: `controls.json` (data, docs/controls.md) checked once at load and exposed typed.
 * Every other part of govctl reads controls from here; there is no second copy of the table.
 *
 * The JSON is imported (not read from disk) so that esbuild inlines it into the bundle and vitest
 * loads it from source alike.
 */
import { CATALOGUE, isRecordType } from '../records/catalogue.js';
import { FRAMEWORKS, type Framework, type RecordType } from '../records/types.js';
import controlsJson from './controls.json' with { type: 'json' };

/** Payload conditions a catalogue entry may put on a record type (data, not code). */
export const CONDITION_KINDS = ['number', 'non_empty'] as const;
export type ConditionKind = (typeof CONDITION_KINDS)[number];

/**
 * A condition on one payload field: `number` holds for a finite JSON number, `non_empty` for an
 * object or array with at least one member.
 */
export interface EvidenceCondition {
  readonly field: string;
  readonly is: ConditionKind;
}

/** One way to earn a control: a record of `record_type`, and when `when` is set, only if it holds. */
export interface EvidenceRule {
  readonly record_type: RecordType;
  readonly when?: EvidenceCondition;
}

export interface Control {
  /** upper-case id with the framework's prefix, e.g. `EUAIA_ART9` */
  readonly id: string;
  readonly framework: Framework;
  /** the article or clause as the framework writes it, e.g. `Art 9`, `A.6.1`, `CC8.1` */
  readonly clause: string;
  readonly title: string;
  /** counted in the framework score (docs/controls.md) */
  readonly required: boolean;
  /** a record earns the control for this many days after it occurred */
  readonly freshness_days: number;
  readonly evidenced_by: readonly EvidenceRule[];
}

export interface FrameworkInfo {
  readonly framework: Framework;
  /** human-readable name, e.g. `EU AI Act` */
  readonly name: string;
  /** every control id of the framework starts with it, e.g. `EUAIA_` */
  readonly id_prefix: string;
}

export interface ControlCatalogue {
  /** frameworks in the fixed order of {@link FRAMEWORKS} */
  readonly frameworks: readonly FrameworkInfo[];
  /** controls in catalogue (file) order */
  readonly controls: readonly Control[];
}

/** The catalogue data is malformed; `problems` lists every problem found, each with a dotted path. */
export class ControlCatalogueError extends Error {
  override readonly name = 'ControlCatalogueError';
  constructor(readonly problems: readonly string[]) {
    super(`invalid control catalogue: ${problems.join('; ')}`);
  }
}

const CONTROL_ID = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;
const CONTROL_KEYS = new Set(['id', 'framework', 'clause', 'title', 'required', 'freshness_days', 'evidenced_by']);
const RULE_KEYS = new Set(['record_type', 'when']);
const CONDITION_KEYS = new Set(['field', 'is']);
const FRAMEWORK_KEYS = new Set(['name', 'id_prefix']);

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function unknownKeys(value: Record<string, unknown>, allowed: Set<string>, path: string, problems: string[]): void {
  for (const key of Object.keys(value)) if (!allowed.has(key)) problems.push(`${path}.${key}: unknown key`);
}

function checkFrameworks(value: unknown, problems: string[]): FrameworkInfo[] {
  if (!isObject(value)) {
    problems.push('frameworks: must be an object of framework → { name, id_prefix }');
    return [];
  }
  for (const key of Object.keys(value)) {
    if (!FRAMEWORKS.includes(key as Framework)) problems.push(`frameworks.${key}: unknown framework (expected one of ${FRAMEWORKS.join(', ')})`);
  }
  const out: FrameworkInfo[] = [];
  for (const framework of FRAMEWORKS) {
    const path = `frameworks.${framework}`;
    const entry = value[framework];
    if (!isObject(entry)) {
      problems.push(`${path}: missing`);
      continue;
    }
    unknownKeys(entry, FRAMEWORK_KEYS, path, problems);
    if (!isNonEmptyString(entry.name)) problems.push(`${path}.name: must be a non-empty string`);
    if (typeof entry.id_prefix !== 'string' || !/^[A-Z][A-Z0-9_]*_$/.test(entry.id_prefix)) {
      problems.push(`${path}.id_prefix: must be upper-case and end with _`);
    }
    out.push({ framework, name: String(entry.name), id_prefix: String(entry.id_prefix) });
  }
  return out;
}

function checkCondition(value: unknown, recordType: unknown, path: string, problems: string[]): void {
  if (!isObject(value)) {
    problems.push(`${path}: must be an object { field, is }`);
    return;
  }
  unknownKeys(value, CONDITION_KEYS, path, problems);
  if (!CONDITION_KINDS.includes(value.is as ConditionKind)) problems.push(`${path}.is: must be one of ${CONDITION_KINDS.join(', ')}`);
  if (!isNonEmptyString(value.field)) {
    problems.push(`${path}.field: must be a non-empty string`);
  } else if (isRecordType(recordType) && !CATALOGUE.get(recordType)!.fields.some((field) => field.wire === value.field)) {
    // A condition on a key the record type does not have could never hold: a typo.
    problems.push(`${path}.field: ${recordType} has no payload field ${value.field}`);
  }
}

function checkControl(value: unknown, index: number, prefixes: ReadonlyMap<Framework, string>, problems: string[]): void {
  const path = `controls.${index}`;
  if (!isObject(value)) {
    problems.push(`${path}: must be an object`);
    return;
  }
  unknownKeys(value, CONTROL_KEYS, path, problems);
  const { id, framework } = value;
  if (!FRAMEWORKS.includes(framework as Framework)) problems.push(`${path}.framework: must be one of ${FRAMEWORKS.join(', ')}`);
  if (typeof id !== 'string' || !CONTROL_ID.test(id)) {
    problems.push(`${path}.id: must be upper-case letters, digits and single underscores`);
  } else {
    const prefix = prefixes.get(framework as Framework);
    if (prefix !== undefined && !id.startsWith(prefix)) problems.push(`${path}.id: must start with ${prefix} for ${String(framework)}`);
  }
  if (!isNonEmptyString(value.clause)) problems.push(`${path}.clause: must be a non-empty string`);
  if (!isNonEmptyString(value.title)) problems.push(`${path}.title: must be a non-empty string`);
  if (typeof value.required !== 'boolean') problems.push(`${path}.required: must be true or false`);
  const days = value.freshness_days;
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > 3660) {
    problems.push(`${path}.freshness_days: must be a whole number of days from 1 to 3660`);
  }
  const rules = value.evidenced_by;
  if (!Array.isArray(rules) || rules.length === 0) {
    problems.push(`${path}.evidenced_by: must be a non-empty array`);
    return;
  }
  const seen = new Set<unknown>();
  rules.forEach((rule: unknown, j) => {
    const rulePath = `${path}.evidenced_by.${j}`;
    if (!isObject(rule)) {
      problems.push(`${rulePath}: must be an object { record_type, when? }`);
      return;
    }
    unknownKeys(rule, RULE_KEYS, rulePath, problems);
    if (!isRecordType(rule.record_type)) problems.push(`${rulePath}.record_type: must be a record type`);
    // One rule per record type keeps "which records earn this" unambiguous.
    else if (seen.has(rule.record_type)) problems.push(`${rulePath}.record_type: ${rule.record_type} appears twice`);
    seen.add(rule.record_type);
    if (rule.when !== undefined) checkCondition(rule.when, rule.record_type, `${rulePath}.when`, problems);
  });
}

function freezeControl(value: Record<string, unknown>): Control {
  const evidenced = (value.evidenced_by as Record<string, unknown>[]).map((rule) =>
    Object.freeze(
      rule.when === undefined
        ? { record_type: rule.record_type as RecordType }
        : {
            record_type: rule.record_type as RecordType,
            when: Object.freeze({ field: (rule.when as EvidenceCondition).field, is: (rule.when as EvidenceCondition).is }),
          },
    ),
  );
  return Object.freeze({
    id: value.id as string,
    framework: value.framework as Framework,
    clause: value.clause as string,
    title: value.title as string,
    required: value.required as boolean,
    freshness_days: value.freshness_days as number,
    evidenced_by: Object.freeze(evidenced),
  });
}

/**
 * Checks catalogue data and returns it typed and frozen. Rules: the five frameworks exactly, each
 * with a name and id prefix and at least one required control; unique upper-case ids with their
 * framework's prefix; a title and clause; `freshness_days` a whole number ≥ 1; `evidenced_by` a
 * non-empty list of known record types (each once) whose conditions name a payload field of that
 * type; no unknown keys anywhere (a typo must not silently earn nothing).
 *
 * @throws ControlCatalogueError listing every problem.
 * @example loadControlCatalogue(JSON.parse(text)).controls.length // 52
 */
export function loadControlCatalogue(data: unknown): ControlCatalogue {
  const problems: string[] = [];
  if (!isObject(data)) throw new ControlCatalogueError(['the catalogue must be a JSON object { frameworks, controls }']);
  for (const key of Object.keys(data)) {
    if (key !== 'frameworks' && key !== 'controls' && key !== '$comment') problems.push(`${key}: unknown key`);
  }
  const frameworks = checkFrameworks(data.frameworks, problems);
  const prefixes = new Map(frameworks.map((info) => [info.framework, info.id_prefix]));
  const controls = data.controls;
  if (!Array.isArray(controls) || controls.length === 0) {
    problems.push('controls: must be a non-empty array');
    throw new ControlCatalogueError(problems);
  }
  controls.forEach((control: unknown, index) => checkControl(control, index, prefixes, problems));
  const ids = new Map<unknown, number>();
  controls.forEach((control: unknown, index) => {
    if (!isObject(control) || typeof control.id !== 'string') return;
    const first = ids.get(control.id);
    if (first !== undefined) problems.push(`controls.${index}.id: ${control.id} duplicates controls.${first}.id`);
    else ids.set(control.id, index);
  });
  for (const framework of FRAMEWORKS) {
    const hasRequired = controls.some((control: unknown) => isObject(control) && control.framework === framework && control.required === true);
    if (!hasRequired) problems.push(`controls: ${framework} has no required control (its score would be undefined)`);
  }
  if (problems.length > 0) throw new ControlCatalogueError(problems);
  return Object.freeze({
    frameworks: Object.freeze(frameworks.map((info) => Object.freeze(info))),
    controls: Object.freeze(controls.map((control) => freezeControl(control as Record<string, unknown>))),
  });
}

const catalogue = loadControlCatalogue(controlsJson);

/** Every control, in catalogue order (by framework, then by clause). */
export const CONTROLS: readonly Control[] = catalogue.controls;

/** The five frameworks with their display names, in the fixed order of {@link FRAMEWORKS}. */
export const FRAMEWORK_INFO: readonly FrameworkInfo[] = catalogue.frameworks;

const byId: ReadonlyMap<string, Control> = new Map(CONTROLS.map((control) => [control.id, control]));
const byFramework: ReadonlyMap<Framework, readonly Control[]> = new Map(
  FRAMEWORKS.map((framework) => [framework, Object.freeze(CONTROLS.filter((control) => control.framework === framework))]),
);
const frameworkNames: ReadonlyMap<Framework, string> = new Map(FRAMEWORK_INFO.map((info) => [info.framework, info.name]));

/** The controls of one framework, in catalogue order; empty for an unknown framework. */
export function controlsForFramework(framework: Framework): readonly Control[] {
  return byFramework.get(framework) ?? [];
}

/** The control with this id, or `undefined`. */
export function controlById(id: string): Control | undefined {
  return byId.get(id);
}

/** A framework's display name, e.g. `frameworkName('eu_ai_act') === 'EU AI Act'`. */
export function frameworkName(framework: Framework): string {
  return frameworkNames.get(framework) ?? framework;
}
