/**
 * Validation of evidence records against the catalogue, shared by the client (before sending)
 * and the service (docs/wire-format.md). Validators collect every bad field with a dotted path.
 */
import { isJsonNumber, isPlainObject, jsonNumberValue } from '../canonical-json.js';
import { CATALOGUE, isRecordType } from './catalogue.js';
import { ENVIRONMENTS, RECORD_TYPES, type FieldSpec, type Payload, type RecordTypeSpec, type ValidationIssue } from './types.js';

/** Longest accepted system, tool or agent name. */
export const MAX_NAME_LENGTH = 256;

/**
 * The date-times validation takes, as a regular expression's text (the MCP tools' JSON Schemas
 * carry it as their `pattern`, beside `format: date-time`): `YYYY-MM-DDThh:mm`, then optionally
 * `:ss` and up to nine fraction digits, then `Z` or an offset `±hh:mm` (the colon optional);
 * hours 00-23, minutes and seconds 00-59 (no leap second), offsets within ±23:59, upper-case
 * `T` and `Z`. Whether the day exists is isDateTime's check (isCalendarDay).
 */
export const DATE_TIME_PATTERN = '^(\\d{4})-(\\d{2})-(\\d{2})T(?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d{1,9})?)?(?:Z|[+-](?:[01]\\d|2[0-3]):?[0-5]\\d)$';
const DATETIME = new RegExp(DATE_TIME_PATTERN);
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const HEX64 = /^[0-9a-fA-F]{64}$/;

/**
 * Whether year-month-day names a day of the calendar. `Date.parse` alone is not enough: V8 rolls
 * `2026-02-30` over to 2 March and reads `T24:00:00` as the next midnight, so a record would be
 * stored under a date other than the one it was signed with.
 */
function isCalendarDay(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return day <= days;
}

/** An RFC 3339 date-time with real calendar fields (DATE_TIME_PATTERN, on a day that exists). */
export function isDateTime(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const m = DATETIME.exec(value);
  if (m === null) return false;
  if (!isCalendarDay(Number(m[1]), Number(m[2]), Number(m[3]))) return false;
  return !Number.isNaN(Date.parse(value));
}

/** A calendar date `YYYY-MM-DD` that exists (no 30 February). */
export function isDate(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const m = DATE.exec(value);
  return m !== null && isCalendarDay(Number(m[1]), Number(m[2]), Number(m[3])) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`));
}

export function isHex64(value: unknown): value is string {
  return typeof value === 'string' && HEX64.test(value);
}

function issue(path: string, code: ValidationIssue['code'], message: string): ValidationIssue {
  return { path, code, message };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (isJsonNumber(value)) return 'a number';
  return `a ${typeof value}`;
}

function checkKind(field: FieldSpec, value: unknown, path: string): ValidationIssue[] {
  switch (field.kind) {
    case 'string':
      if (typeof value !== 'string') return [issue(path, 'type', `must be a string, got ${describe(value)}`)];
      if (field.required && value.trim() === '') return [issue(path, 'required', 'must not be empty')];
      break;
    case 'date':
      if (!isDate(value)) return [issue(path, 'format', 'must be a date in the form YYYY-MM-DD')];
      break;
    case 'datetime':
      if (!isDateTime(value)) return [issue(path, 'format', 'must be an ISO 8601 date and time, e.g. 2026-01-31T09:30:00Z')];
      break;
    case 'boolean':
      if (typeof value !== 'boolean') return [issue(path, 'type', `must be true or false, got ${describe(value)}`)];
      break;
    case 'number':
      if (!isJsonNumber(value) || !Number.isFinite(jsonNumberValue(value))) return [issue(path, 'type', `must be a number, got ${describe(value)}`)];
      break;
    case 'integer':
      if (!(typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value)))) {
        return [issue(path, 'type', `must be a whole number, got ${describe(value)}`)];
      }
      break;
    case 'string[]': {
      if (!Array.isArray(value)) return [issue(path, 'type', `must be an array of strings, got ${describe(value)}`)];
      if (field.required && value.length === 0) return [issue(path, 'required', 'must have at least one entry')];
      const bad = value.findIndex((item) => typeof item !== 'string' || (field.enum !== undefined && !field.enum.includes(item)));
      if (bad >= 0) {
        return field.enum && typeof value[bad] === 'string'
          ? [issue(`${path}.${bad}`, 'enum', `must be one of: ${field.enum.join(', ')}`)]
          : [issue(`${path}.${bad}`, 'type', `must be a string, got ${describe(value[bad])}`)];
      }
      return [];
    }
    case 'number-map': {
      if (!isPlainObject(value)) return [issue(path, 'type', `must be an object of name → number, got ${describe(value)}`)];
      for (const [name, metric] of Object.entries(value)) {
        if (!isJsonNumber(metric) || !Number.isFinite(jsonNumberValue(metric))) return [issue(`${path}.${name}`, 'type', 'must be a number')];
      }
      return [];
    }
  }
  if (field.enum && !field.enum.includes(value as string)) return [issue(path, 'enum', `must be one of: ${field.enum.join(', ')}`)];
  if (isJsonNumber(value)) {
    const n = jsonNumberValue(value);
    if ((field.min !== undefined && n < field.min) || (field.max !== undefined && n > field.max)) {
      const range = field.max === undefined ? `at least ${field.min}` : `between ${field.min ?? '-∞'} and ${field.max}`;
      return [issue(path, 'range', `must be ${range}`)];
    }
  }
  return [];
}

/** Every problem with a payload of the given type. Unknown keys are allowed (kept, earn nothing). */
export function validatePayload(spec: RecordTypeSpec, payload: Payload, prefix = 'payload'): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const field of spec.fields) {
    const path = `${prefix}.${field.wire}`;
    const value = payload[field.wire];
    if (value === undefined || value === null) {
      if (field.required) issues.push(issue(path, 'required', 'is required'));
      continue;
    }
    issues.push(...checkKind(field, value, path));
  }
  if (spec.rules) issues.push(...spec.rules(payload).map((found) => ({ ...found, path: found.path.replace(/^payload/, prefix) })));
  return issues;
}

function optionalString(record: Record<string, unknown>, key: string, issues: ValidationIssue[]): void {
  const value = record[key];
  if (value !== undefined && value !== null && typeof value !== 'string') issues.push(issue(key, 'type', `must be a string, got ${describe(value)}`));
}

/** Checks a required name (system, tool, agent): a non-empty string of at most {@link MAX_NAME_LENGTH} characters. */
export function checkName(value: unknown, path: string, required: boolean): ValidationIssue[] {
  if (value === undefined || value === null) return required ? [issue(path, 'required', 'is required')] : [];
  if (typeof value !== 'string') return [issue(path, 'type', `must be a string, got ${describe(value)}`)];
  if (value.trim() === '') return [issue(path, 'required', 'must not be empty')];
  if (value.length > MAX_NAME_LENGTH) return [issue(path, 'range', `must be at most ${MAX_NAME_LENGTH} characters`)];
  return [];
}

/**
 * Every problem with a GRC evidence record as submitted (docs/wire-format.md "Evidence records"), top level and payload.
 * Used by the client before sending and by the service on every write.
 */
export function validateRecord(record: unknown): ValidationIssue[] {
  if (!isPlainObject(record)) return [issue('', 'type', 'the record must be a JSON object')];
  const issues: ValidationIssue[] = [];
  const type = record.record_type;
  if (type === undefined || type === null) issues.push(issue('record_type', 'required', 'is required'));
  else if (!isRecordType(type)) issues.push(issue('record_type', 'enum', `must be one of: ${RECORD_TYPES.join(', ')}`));
  issues.push(...checkName(record.system_name, 'system_name', true));
  optionalString(record, 'identity', issues);
  optionalString(record, 'resource', issues);
  const environment = record.environment;
  if (environment !== undefined && environment !== null && !ENVIRONMENTS.includes(environment as never)) {
    issues.push(issue('environment', 'enum', `must be one of: ${ENVIRONMENTS.join(', ')}`));
  }
  if (record.occurred_at !== undefined && record.occurred_at !== null && !isDateTime(record.occurred_at)) {
    issues.push(issue('occurred_at', 'format', 'must be an ISO 8601 date and time, e.g. 2026-01-31T09:30:00Z'));
  }
  if (record.client_sig !== undefined && record.client_sig !== null) {
    if (!isHex64(record.client_sig)) issues.push(issue('client_sig', 'format', 'must be 64 hex characters (HMAC-SHA256)'));
    if (record.client_sig_algo !== 'hmac-sha256') issues.push(issue('client_sig_algo', 'enum', 'must be hmac-sha256 when client_sig is present'));
  } else if (record.client_sig_algo !== undefined && record.client_sig_algo !== null) {
    issues.push(issue('client_sig', 'required', 'is required when client_sig_algo is present'));
  }
  const payload = record.payload;
  if (payload === undefined || payload === null) issues.push(issue('payload', 'required', 'is required'));
  else if (!isPlainObject(payload)) issues.push(issue('payload', 'type', `must be an object, got ${describe(payload)}`));
  else if (isRecordType(type)) issues.push(...validatePayload(CATALOGUE.get(type)!, payload));
  return issues;
}
