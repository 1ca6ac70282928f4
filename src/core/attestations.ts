/**
 * Attestation records (docs/wire-format.md "Attestations"): the wire shape, how a client builds one, and the checks the
 * client and the service share. Mandatory fields are a decision (docs/decisions.md): system,
 * tool, both hashes; executed_at defaults to now on either side.
 */
import { isPlainObject } from './canonical-json.js';
import { isDateTime, isHex64, checkName } from './records/validate.js';
import type { ValidationIssue } from './records/types.js';
import { isJsonNumber } from './canonical-json.js';

export const SCHEMA_VERSION = 2;

/** Wire form of `authorised_by`; the client's `sessionId` input travels as `session_id`. */
export interface AuthorisedBy {
  identity: string;
  role?: string;
  session_id?: string;
}

export interface AttestationRecord {
  system_name: string;
  agent_name: string;
  tool_name: string;
  input_hash: string;
  output_hash: string;
  schema_version: number;
  executed_at: string;
  model_id?: string;
  authorised_by?: AuthorisedBy;
  witness_sig?: string;
  verifying_key_hex?: string;
}

export interface AttestationInput {
  systemName: string;
  /** default: the system name */
  agentName?: string;
  toolName: string;
  inputHash: string;
  outputHash: string;
  /** default: now */
  executedAt?: string | Date;
  modelId?: string;
  authorisedBy?: { identity: string; role?: string; sessionId?: string };
}

/** The attestation record exactly as it will be sent (before signing). */
export function buildAttestation(input: AttestationInput, now: () => Date = () => new Date()): AttestationRecord {
  const executed = input.executedAt ?? now();
  const record: AttestationRecord = {
    system_name: input.systemName,
    agent_name: input.agentName ?? input.systemName,
    tool_name: input.toolName,
    input_hash: input.inputHash,
    output_hash: input.outputHash,
    schema_version: SCHEMA_VERSION,
    executed_at: executed instanceof Date ? executed.toISOString() : executed,
  };
  if (input.modelId !== undefined) record.model_id = input.modelId;
  if (input.authorisedBy) {
    const by: AuthorisedBy = { identity: input.authorisedBy.identity };
    if (input.authorisedBy.role !== undefined) by.role = input.authorisedBy.role;
    if (input.authorisedBy.sessionId !== undefined) by.session_id = input.authorisedBy.sessionId;
    record.authorised_by = by;
  }
  return record;
}

function check(issues: ValidationIssue[], ok: boolean, path: string, code: ValidationIssue['code'], message: string): void {
  if (!ok) issues.push({ path, code, message });
}

/** Every problem with an attestation as submitted; `prefix` is `records.3` inside a batch. */
export function validateAttestation(record: unknown, prefix = ''): ValidationIssue[] {
  const at = (key: string) => (prefix ? `${prefix}.${key}` : key);
  if (!isPlainObject(record)) return [{ path: prefix, code: 'type', message: 'the attestation must be a JSON object' }];
  const issues: ValidationIssue[] = [
    ...checkName(record.system_name, at('system_name'), true),
    ...checkName(record.tool_name, at('tool_name'), true),
    ...checkName(record.agent_name, at('agent_name'), false),
  ];
  for (const key of ['input_hash', 'output_hash']) {
    if (record[key] === undefined || record[key] === null) issues.push({ path: at(key), code: 'required', message: 'is required' });
    else check(issues, isHex64(record[key]), at(key), 'format', 'must be a hex SHA-256 digest (64 hex characters)');
  }
  if (record.schema_version !== undefined && record.schema_version !== null) {
    const version = record.schema_version;
    check(issues, isJsonNumber(version) && (version === 1 || version === 2), at('schema_version'), 'enum', 'must be 2 (or 1 from older clients)');
  }
  if (record.executed_at !== undefined && record.executed_at !== null) {
    check(issues, isDateTime(record.executed_at), at('executed_at'), 'format', 'must be an ISO 8601 date and time');
  }
  if (record.model_id !== undefined && record.model_id !== null) check(issues, typeof record.model_id === 'string', at('model_id'), 'type', 'must be a string');
  const by = record.authorised_by;
  if (by !== undefined && by !== null) {
    if (!isPlainObject(by)) issues.push({ path: at('authorised_by'), code: 'type', message: 'must be an object with identity, role and session_id' });
    else {
      issues.push(...checkName(by.identity, at('authorised_by.identity'), true));
      for (const key of ['role', 'session_id', 'sessionId']) {
        if (by[key] !== undefined && by[key] !== null) check(issues, typeof by[key] === 'string', at(`authorised_by.${key}`), 'type', 'must be a string');
      }
    }
  }
  const sig = record.witness_sig;
  if (sig !== undefined && sig !== null) {
    check(
      issues,
      typeof sig === 'string' && /^[0-9a-fA-F]{128}$/.test(sig),
      at('witness_sig'),
      'format',
      'must be a hex Ed25519 signature (128 hex characters)',
    );
    if (record.verifying_key_hex === undefined || record.verifying_key_hex === null) {
      issues.push({ path: at('verifying_key_hex'), code: 'required', message: 'is required with witness_sig' });
    } else check(issues, isHex64(record.verifying_key_hex), at('verifying_key_hex'), 'format', 'must be a hex Ed25519 public key (64 hex characters)');
  }
  return issues;
}
