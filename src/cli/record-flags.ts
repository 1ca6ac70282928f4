/**
 * `evidence add <type>` flags, generated from the record-type catalogue (design/cli.md
 * "Commands"; core/records/catalogue.ts is the single list). One flag per payload field, named
 * after its wire name in kebab-case or the field's `flag`; array fields as a singular flag that
 * repeats; number maps as a repeatable `name=value`; booleans as `--flag` / `--no-flag`; one flag
 * per top input; and the common `--occurred-at`, `--identity`, `--resource`, `--environment`
 * (`--system` is global). Values are parsed here, strictly and losslessly, and every bad value is
 * reported together with the validation issues (65), with dotted paths mapped back to flags.
 */
import { Option } from 'commander';
import { ENVIRONMENTS, JsonFloat, parseJsonLossless, type FieldSpec, type RecordTypeSpec, type TopInputSpec, type ValidationIssue } from '../core/index.js';
import { collect, completeWith } from './command-kit.js';

/** `risk_level` → `risk-level`. */
export function kebab(wire: string): string {
  return wire.replace(/_/g, '-');
}

/** Flags that fill top-level members of any record (design/cli.md); `--system` is a global option. */
export const COMMON_FLAGS = [
  { flag: 'occurred-at', member: 'occurred_at', value: '<time>', description: 'when it happened, ISO 8601 (default: now)' },
  { flag: 'identity', member: 'identity', value: '<id>', description: 'actor e-mail or identifier (overrides the derived one)' },
  { flag: 'resource', member: 'resource', value: '<name>', description: 'resource affected (overrides the derived one)' },
  { flag: 'environment', member: 'environment', value: '<env>', description: `environment: ${ENVIRONMENTS.join(', ')}` },
] as const;

/** Global options a payload field may share a flag with; the global's value then fills the field. */
const GLOBAL_FLAGS: Readonly<Record<string, 'systemName'>> = { system: 'systemName' };

/** How one flag of a record type maps to the record. */
export type FlagBinding =
  | { kind: 'field'; flag: string; attribute: string; field: FieldSpec; required: boolean; global?: 'systemName' }
  | { kind: 'top'; flag: string; attribute: string; input: TopInputSpec }
  | { kind: 'common'; flag: string; attribute: string; member: (typeof COMMON_FLAGS)[number]['member'] };

/** The flags of one record type and the options that declare them. */
export interface RecordFlags {
  bindings: FlagBinding[];
  options: Option[];
}

/**
 * Fields that the record type derives when they are not given (human_oversight's `override`):
 * found by running the type's `derivePayload` on a payload with every other required field set.
 */
function derivedFields(spec: RecordTypeSpec): Set<string> {
  const derived = new Set<string>();
  if (!spec.derivePayload) return derived;
  for (const target of spec.fields) {
    const sample: Record<string, unknown> = {};
    let n = 0;
    for (const field of spec.fields) if (field !== target && field.kind === 'string') sample[field.wire] = `sample-${n++}`;
    spec.derivePayload(sample);
    if (sample[target.wire] !== undefined) derived.add(target.wire);
  }
  return derived;
}

/** Whether a field must be given: required, no default, not derived. */
function mustBeGiven(field: FieldSpec, derived: ReadonlySet<string>): boolean {
  return field.required && field.default === undefined && !derived.has(field.wire);
}

function fieldHelp(field: FieldSpec, required: boolean): string {
  const parts = [field.description];
  if (field.enum) parts.push(`one of: ${field.enum.join(', ')}`);
  if (field.kind === 'date') parts.push('YYYY-MM-DD');
  if (field.kind === 'datetime') parts.push('ISO 8601');
  if (field.kind === 'integer') parts.push('whole number');
  if (field.min !== undefined || field.max !== undefined) parts.push(`${field.min ?? '…'}–${field.max ?? '…'}`);
  if (field.default !== undefined) parts.push(`default: ${field.default}`);
  return `${parts.join('; ')}${required ? ' (required)' : ''}`;
}

function valueName(field: FieldSpec): string {
  switch (field.kind) {
    case 'number':
    case 'integer':
      return '<number>';
    case 'number-map':
      return '<name=value>';
    case 'date':
      return '<date>';
    case 'datetime':
      return '<time>';
    default:
      return field.enum ? '<value>' : '<text>';
  }
}

/** Generates the flags of a record type from its catalogue entry. */
export function recordFlags(spec: RecordTypeSpec): RecordFlags {
  const derived = derivedFields(spec);
  const bindings: FlagBinding[] = [];
  const options: Option[] = [];
  const taken = new Set<string>();

  for (const field of spec.fields) {
    if (field.fixed) continue;
    const flag = field.flag ?? kebab(field.wire);
    taken.add(flag);
    const required = mustBeGiven(field, derived);
    const global = GLOBAL_FLAGS[flag];
    if (global) {
      // e.g. change_event's `system`: the global --system fills it.
      bindings.push({ kind: 'field', flag, attribute: '', field, required, global });
      continue;
    }
    if (field.kind === 'boolean') {
      const yes = new Option(`--${flag}`, fieldHelp(field, required));
      const no = new Option(`--no-${flag}`, `sets ${field.wire} to false`);
      options.push(yes, no);
      bindings.push({ kind: 'field', flag, attribute: yes.attributeName(), field, required });
      continue;
    }
    const option = new Option(
      `--${flag} ${valueName(field)}`,
      fieldHelp(field, required) + ((field.kind === 'string[]' || field.kind === 'number-map') && !/repeat/.test(field.description) ? ' (repeatable)' : ''),
    );
    if (field.kind === 'string[]' || field.kind === 'number-map') option.argParser(collect);
    if (field.enum) completeWith(option, field.enum);
    options.push(option);
    bindings.push({ kind: 'field', flag, attribute: option.attributeName(), field, required });
  }

  for (const input of spec.topInputs) {
    if (taken.has(input.flag)) continue;
    taken.add(input.flag);
    const parts = [input.description];
    if (input.enum) parts.push(`one of: ${input.enum.join(', ')}`);
    const option = new Option(`--${input.flag} <${input.kind === 'datetime' ? 'time' : 'value'}>`, `${parts.join('; ')}${input.required ? ' (required)' : ''}`);
    if (input.enum) completeWith(option, input.enum);
    options.push(option);
    bindings.push({ kind: 'top', flag: input.flag, attribute: option.attributeName(), input });
  }

  for (const common of COMMON_FLAGS) {
    if (taken.has(common.flag)) continue;
    taken.add(common.flag);
    const option = new Option(`--${common.flag} ${common.value}`, common.description);
    if (common.member === 'environment') completeWith(option, ENVIRONMENTS);
    options.push(option);
    bindings.push({ kind: 'common', flag: common.flag, attribute: option.attributeName(), member: common.member });
  }
  return { bindings, options };
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const INTEGER = /^-?(?:0|[1-9]\d*)$/;

/**
 * A number flag's value, read as a JSON number lexeme so that nothing is lost: `85.0` stays a
 * float (it signs as `85.0`), `12345678901234567890` keeps every digit. Undefined when malformed.
 */
export function parseNumberFlag(text: string, integer: boolean): number | bigint | JsonFloat | undefined {
  const trimmed = text.trim();
  if (!(integer ? INTEGER : NUMBER).test(trimmed)) return undefined;
  return parseJsonLossless(trimmed) as number | bigint | JsonFloat;
}

/** What the flags of one invocation give. */
export interface FlagValues {
  payload: Record<string, unknown>;
  top: Record<string, string | undefined>;
  overrides: Record<string, string | undefined>;
  /** values that could not be parsed (a number that is not one), reported with validation */
  issues: ValidationIssue[];
}

/** Reads the parsed commander options of a record type into payload, top inputs and overrides. */
export function readFlags(flags: RecordFlags, opts: Record<string, unknown>, globals: { systemName?: string }): FlagValues {
  const values: FlagValues = { payload: {}, top: {}, overrides: {}, issues: [] };
  for (const binding of flags.bindings) {
    if (binding.kind === 'field' && binding.global) {
      const value = globals[binding.global];
      if (value !== undefined) values.payload[binding.field.wire] = value;
      continue;
    }
    const raw = opts[binding.attribute];
    if (raw === undefined) continue;
    if (binding.kind === 'top') {
      values.top[binding.input.input] = String(raw);
      continue;
    }
    if (binding.kind === 'common') {
      values.overrides[binding.member] = String(raw);
      continue;
    }
    const { field } = binding;
    const path = `payload.${field.wire}`;
    switch (field.kind) {
      case 'number':
      case 'integer': {
        const parsed = parseNumberFlag(String(raw), field.kind === 'integer');
        if (parsed === undefined)
          values.issues.push({ path, code: 'type', message: `must be ${field.kind === 'integer' ? 'a whole number' : 'a number'}, got "${String(raw)}"` });
        else values.payload[field.wire] = parsed;
        break;
      }
      case 'number-map': {
        const map: Record<string, unknown> = {};
        for (const entry of raw as string[]) {
          const eq = entry.indexOf('=');
          const name = eq > 0 ? entry.slice(0, eq).trim() : '';
          const parsed = eq > 0 ? parseNumberFlag(entry.slice(eq + 1), false) : undefined;
          if (name === '' || parsed === undefined) values.issues.push({ path, code: 'type', message: `takes name=number, got "${entry}"` });
          else map[name] = parsed;
        }
        values.payload[field.wire] = map;
        break;
      }
      default:
        values.payload[field.wire] = raw;
    }
  }
  return values;
}

/**
 * A validation issue's dotted path as the user typed it: `payload.risk_level` → `--risk-level
 * (payload.risk_level)`, `payload.impact_domains.2` → `--impact-domain #3`, `assessor` → `--assessor`,
 * `system_name` → `--system`.
 */
export function flagForPath(path: string, flags: RecordFlags): string {
  const top: Record<string, string> = {
    system_name: '--system',
    occurred_at: '--occurred-at',
    identity: '--identity',
    resource: '--resource',
    environment: '--environment',
    payload: '--payload-file',
    client_sig: 'client_sig',
  };
  if (top[path]) return top[path];
  for (const binding of flags.bindings) {
    if (binding.kind === 'top' && binding.input.input === path) return `--${binding.flag}`;
  }
  const match = /^payload\.([^.]+)(?:\.(.+))?$/.exec(path);
  if (match) {
    const [, wire, rest] = match;
    const binding = flags.bindings.find((b) => b.kind === 'field' && b.field.wire === wire);
    if (binding && binding.kind === 'field') {
      const flag = `--${binding.flag}`;
      if (rest === undefined) return `${flag} (${path})`;
      if (binding.field.kind === 'string[]' && /^\d+$/.test(rest)) return `${flag} #${Number(rest) + 1} (${path})`;
      if (binding.field.kind === 'number-map') return `${flag} ${rest} (${path})`;
      return `${flag} (${path})`;
    }
  }
  return path;
}
