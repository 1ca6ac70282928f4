/**
 * The input schemas of the record tools, generated from the record-type catalogue through the very
 * bindings that generate the CLI's `evidence add <type>` flags (../record-flags.ts): the
 * same names (wire names here, kebab-case there), kinds, enums, required members, descriptions and
 * defaults. An argument object is mapped back to the parts `buildRecord` takes, and a validation
 * issue's path back to the argument the agent gave.
 */
import {
  DATE_TIME_PATTERN,
  EXAMPLE_SYSTEM,
  MAX_NAME_LENGTH,
  exampleSelection,
  type FieldSpec,
  type RecordTypeSpec,
  type TopInputSpec,
} from '../../core/index.js';
import { recordFlags, type FlagBinding } from '../record-flags.js';

/** A JSON Schema object (draft 2020-12 keywords only), as MCP's `inputSchema` carries it. */
export type JsonSchema = { [keyword: string]: unknown };

/**
 * What a date-time argument takes: RFC 3339's `format`, narrowed by the pattern validation uses
 * (core's DATE_TIME_PATTERN). The format alone admits a lower-case t or z, a space for the T and a
 * leap second, which the service refuses; an agent that checks its arguments is not surprised.
 */
export const DATE_TIME_SCHEMA = { type: 'string', format: 'date-time', pattern: DATE_TIME_PATTERN } as const;

/** The argument that names the system; a configured system fills it when absent. */
export const SYSTEM_ARGUMENT = 'system_name';
/** Every record tool's: compute the controls, store nothing. */
export const DRY_RUN_ARGUMENT = 'dry_run';
/**
 * ai_risk_assessment's: the human who confirmed the Art 5 self-assessment. The record has no
 * member for it (its payload stays exactly the catalogue's, so signatures and other clients see
 * the same shape); requiring it makes the agent ask a person rather than answer for one.
 */
export const ART5_CONFIRMATION_ARGUMENT = 'art5_confirmed_by';
const ART5_FIELD = 'art5_self_assessment';

/** `acknowledgingIdentity` → `acknowledging_identity`: arguments use the wire's snake_case. */
export function snake(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** How one argument of a record tool maps to the record. */
export type ArgumentBinding =
  | { kind: 'field'; argument: string; field: FieldSpec; required: boolean }
  | { kind: 'top'; argument: string; input: TopInputSpec }
  | { kind: 'common'; argument: string; member: 'occurred_at' | 'identity' | 'resource' | 'environment' }
  /** a payload field the system name fills (change_event's `system`), as the global --system does */
  | { kind: 'system-field'; field: FieldSpec };

/** One record tool's arguments and schema. */
export interface RecordToolSchema {
  bindings: ArgumentBinding[];
  schema: JsonSchema;
}

function describeField(field: FieldSpec, required: boolean): string {
  // The catalogue's descriptions serve the CLI too: a note about repeating a flag does not apply here.
  const parts = [field.description.replace(/\s*\(repeat the flag\)/, '')];
  if (field.kind === 'date') parts.push('YYYY-MM-DD');
  if (field.kind === 'datetime') parts.push('ISO 8601 date and time');
  if (field.kind === 'number-map') parts.push('an object of name → number');
  if (field.default !== undefined) parts.push(`default: ${String(field.default)}`);
  if (!required && field.required) parts.push('filled in when not given');
  return parts.join('; ');
}

/** The JSON Schema of one payload field. */
function fieldSchema(field: FieldSpec, required: boolean): JsonSchema {
  const schema: JsonSchema = {};
  switch (field.kind) {
    case 'string':
      schema.type = 'string';
      break;
    case 'number':
      schema.type = 'number';
      break;
    case 'integer':
      schema.type = 'integer';
      break;
    case 'boolean':
      schema.type = 'boolean';
      break;
    case 'string[]':
      schema.type = 'array';
      schema.items = { type: 'string' };
      break;
    case 'number-map':
      schema.type = 'object';
      schema.additionalProperties = { type: 'number' };
      break;
    case 'date':
      schema.type = 'string';
      schema.format = 'date';
      break;
    case 'datetime':
      Object.assign(schema, DATE_TIME_SCHEMA);
      break;
  }
  if (field.enum) {
    if (field.kind === 'string[]') schema.items = { type: 'string', enum: [...field.enum] };
    else schema.enum = [...field.enum];
  }
  if (field.min !== undefined) schema.minimum = field.min;
  if (field.max !== undefined) schema.maximum = field.max;
  // What validation refuses for a required field, said by the schema too: an empty string, an
  // empty list (decisions.md: a required list records nothing an auditor can check when empty).
  if (required && field.kind === 'string' && !field.enum) schema.minLength = 1;
  if (required && field.kind === 'string[]') schema.minItems = 1;
  if (field.default !== undefined) schema.default = field.default;
  schema.description = describeField(field, required);
  if (field.wire === ART5_FIELD) {
    schema.description =
      'A HUMAN must confirm this: true certifies that no prohibited practice of EU AI Act Art 5 applies to the system. ' +
      'Never set it yourself and never assume it: ask the person responsible, and give their name as art5_confirmed_by. No default.';
  } else if (field.enum || (field.kind !== 'string' && field.kind !== 'string[]')) {
    // Free text is shown in the tool's whole example (`examples` of the object), in place.
    schema.examples = [field.example];
  }
  return schema;
}

const COMMON_DESCRIPTIONS: Readonly<Record<string, string>> = {
  occurred_at: 'when it happened, ISO 8601 (default: now)',
  identity: 'actor e-mail or identifier (overrides the derived one)',
  resource: 'resource affected (overrides the derived one)',
  environment: 'environment (production, staging, development)',
};

/** Maps the CLI's flag bindings of a record type to argument bindings. */
function argumentBindings(flags: readonly FlagBinding[]): ArgumentBinding[] {
  return flags.map((binding): ArgumentBinding => {
    if (binding.kind === 'field') {
      if (binding.global) return { kind: 'system-field', field: binding.field };
      return { kind: 'field', argument: binding.field.wire, field: binding.field, required: binding.required };
    }
    if (binding.kind === 'top') return { kind: 'top', argument: snake(binding.input.input), input: binding.input };
    return { kind: 'common', argument: binding.member, member: binding.member };
  });
}

/** Generates the input schema of the record tool of one record type. */
export function recordToolSchema(spec: RecordTypeSpec): RecordToolSchema {
  const bindings = argumentBindings(recordFlags(spec).bindings);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  // The catalogue's realistic example record (the same one `evidence add <type> --help` shows).
  const selection = exampleSelection(spec);
  const example: Record<string, unknown> = { [SYSTEM_ARGUMENT]: EXAMPLE_SYSTEM };

  for (const binding of bindings) {
    switch (binding.kind) {
      case 'field':
        properties[binding.argument] = fieldSchema(binding.field, binding.required);
        if (binding.required) required.push(binding.argument);
        if (selection.fields.includes(binding.field)) example[binding.argument] = binding.field.example;
        break;
      case 'top': {
        const schema: JsonSchema = { type: 'string', description: binding.input.description };
        if (binding.input.enum) schema.enum = [...binding.input.enum];
        if (binding.input.kind === 'datetime') Object.assign(schema, DATE_TIME_SCHEMA);
        if (binding.input.required && !binding.input.enum) schema.minLength = 1;
        properties[binding.argument] = schema;
        if (binding.input.required) required.push(binding.argument);
        if (selection.topInputs.includes(binding.input)) example[binding.argument] = binding.input.example;
        break;
      }
      case 'common': {
        const schema: JsonSchema = { type: 'string', description: COMMON_DESCRIPTIONS[binding.member] };
        if (binding.member === 'occurred_at') Object.assign(schema, DATE_TIME_SCHEMA);
        if (binding.member === 'environment') schema.enum = ['production', 'staging', 'development'];
        properties[binding.argument] = schema;
        break;
      }
      case 'system-field':
        break;
    }
  }

  const fillsField = bindings.find((binding) => binding.kind === 'system-field');
  properties[SYSTEM_ARGUMENT] = {
    type: 'string',
    minLength: 1,
    maxLength: MAX_NAME_LENGTH,
    description: `the AI system the record is about${fillsField ? ` (also fills payload.${fillsField.field.wire})` : ''}; default: the configured system (SERVICE_SYSTEM_NAME or --system)`,
  };
  if (spec.fields.some((field) => field.wire === ART5_FIELD)) {
    properties[ART5_CONFIRMATION_ARGUMENT] = {
      type: 'string',
      minLength: 1,
      description: `the person who confirmed ${ART5_FIELD} (name or e-mail). Required: ask a human; an agent never confirms it on its own.`,
    };
    required.push(ART5_CONFIRMATION_ARGUMENT);
    example[ART5_FIELD] = false;
    example[ART5_CONFIRMATION_ARGUMENT] = 'alice@example.com';
  }
  properties[DRY_RUN_ARGUMENT] = {
    type: 'boolean',
    default: false,
    description: 'true: validate and show the controls the record would earn, store nothing. Run it first.',
  };
  example[DRY_RUN_ARGUMENT] = true;

  return {
    bindings,
    schema: { type: 'object', properties, required, additionalProperties: false, examples: [example] },
  };
}

/** What `buildRecord` takes, read from a record tool's arguments. */
export interface RecordArguments {
  payload: Record<string, unknown>;
  top: Record<string, string | undefined>;
  overrides: Record<string, string | undefined>;
}

/** Reads a record tool's (schema-checked) arguments into payload, top inputs and overrides. */
export function readRecordArguments(bindings: readonly ArgumentBinding[], args: Record<string, unknown>, systemName: string | undefined): RecordArguments {
  const values: RecordArguments = { payload: {}, top: {}, overrides: {} };
  for (const binding of bindings) {
    if (binding.kind === 'system-field') {
      if (systemName !== undefined) values.payload[binding.field.wire] = systemName;
      continue;
    }
    const value = args[binding.argument];
    if (value === undefined) continue;
    if (binding.kind === 'field') values.payload[binding.field.wire] = value;
    else if (binding.kind === 'top') values.top[binding.input.input] = String(value);
    else values.overrides[binding.member] = String(value);
  }
  return values;
}

/**
 * A validation issue's path as the agent gave it: `payload.risk_level` → `risk_level`,
 * `payload.impact_domains.2` → `impact_domains[2]`, `assessor` → `assessor`, `acknowledgingIdentity`
 * → `acknowledging_identity`.
 */
export function argumentForPath(path: string, bindings: readonly ArgumentBinding[]): string {
  for (const binding of bindings) if (binding.kind === 'top' && binding.input.input === path) return binding.argument;
  const match = /^payload\.([^.]+)(?:\.(.+))?$/.exec(path);
  if (match) {
    const [, wire, rest] = match;
    const system = bindings.find((binding) => binding.kind === 'system-field' && binding.field.wire === wire);
    if (system) return SYSTEM_ARGUMENT;
    if (rest === undefined) return wire;
    return /^\d+$/.test(rest) ? `${wire}[${rest}]` : `${wire}.${rest}`;
  }
  return path;
}
