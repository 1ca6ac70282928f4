/**
 * Building a wire record from inputs: the client's camelCase inputs or the CLI's wire-named
 * payload, plus the inputs that fill top-level members (docs/service.md "Record payloads").
 */
import { recordTypeSpec } from './catalogue.js';
import type { Payload, RecordType, RecordTypeSpec, TopLevel, ValidationIssue } from './types.js';
import { isDateTime, validateRecord } from './validate.js';

/** A GRC evidence record as sent to the service (docs/wire-format.md "Evidence records"). */
export interface EvidenceRecord {
  record_type: RecordType;
  system_name: string;
  payload: Payload;
  identity?: string;
  resource?: string;
  environment?: string;
  occurred_at: string;
  client_sig?: string;
  client_sig_algo?: 'hmac-sha256';
}

export interface RecordParts {
  /** payload keyed by wire name; unset keys omitted */
  payload: Payload;
  /** top inputs by input name (assessor, detectedAt, acknowledgingIdentity, environment) */
  top?: Record<string, string | undefined>;
  /** the record's system_name */
  systemName?: string;
  /** explicit top-level values; they win over the derived ones */
  overrides?: TopLevel;
}

export type BuildResult = { ok: true; record: EvidenceRecord } | { ok: false; issues: ValidationIssue[] };

/** Current time as the wire wants it: UTC, ISO 8601 with milliseconds and `Z`. */
export function isoNow(now: Date = new Date()): string {
  return now.toISOString();
}

function checkTopInputs(spec: RecordTypeSpec, top: Record<string, string | undefined>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const input of spec.topInputs) {
    const value = top[input.input];
    if (value === undefined || value === '') {
      if (input.required) issues.push({ path: input.input, code: 'required', message: 'is required' });
    } else if (input.enum && !input.enum.includes(value)) {
      issues.push({ path: input.input, code: 'enum', message: `must be one of: ${input.enum.join(', ')}` });
    } else if (input.kind === 'datetime' && !isDateTime(value)) {
      issues.push({ path: input.input, code: 'format', message: 'must be an ISO 8601 date and time' });
    }
  }
  return issues;
}

/**
 * Completes and validates a record: applies payload defaults and derived values (human_oversight's
 * override), fills identity/resource/environment/occurred_at as the catalogue says, and reports
 * every problem at once. Optional keys are omitted when unset, never sent as null.
 */
export function buildRecord(type: RecordType, parts: RecordParts, now: () => Date = () => new Date()): BuildResult {
  const spec = recordTypeSpec(type);
  const payload: Payload = {};
  for (const [key, value] of Object.entries(parts.payload)) if (value !== undefined && value !== null) payload[key] = value;
  for (const field of spec.fields) {
    if (payload[field.wire] === undefined && field.default !== undefined) payload[field.wire] = field.default;
  }
  spec.derivePayload?.(payload);

  const top = { ...parts.top, systemName: parts.systemName };
  const derived = spec.topLevel(payload, top);
  const merged: TopLevel = { ...derived };
  for (const [key, value] of Object.entries(parts.overrides ?? {})) if (value !== undefined) merged[key as keyof TopLevel] = value;

  const record: EvidenceRecord = { record_type: type, system_name: parts.systemName as string, payload, occurred_at: merged.occurred_at ?? isoNow(now()) };
  if (merged.identity !== undefined) record.identity = merged.identity;
  if (merged.resource !== undefined) record.resource = merged.resource;
  if (merged.environment !== undefined) record.environment = merged.environment;

  const issues = [...checkTopInputs(spec, top), ...validateRecord(record)];
  return issues.length > 0 ? { ok: false, issues } : { ok: true, record };
}

/**
 * Maps the client library's camelCase inputs of a record type to wire parts: payload keys by the
 * catalogue's `input` → `wire` mapping, top inputs by name. Unknown inputs are ignored.
 */
export function partsFromInputs(type: RecordType, inputs: Record<string, unknown>): { payload: Payload; top: Record<string, string | undefined> } {
  const spec = recordTypeSpec(type);
  const payload: Payload = {};
  for (const field of spec.fields) {
    if (field.fixed) continue;
    const value = inputs[field.input];
    if (value !== undefined) payload[field.wire] = value;
  }
  const top: Record<string, string | undefined> = {};
  for (const input of spec.topInputs) {
    const value = inputs[input.input];
    if (value !== undefined) top[input.input] = value instanceof Date ? value.toISOString() : String(value);
  }
  return { payload, top };
}
