/**
 * `client_sig`: HMAC-SHA256 over the canonical JSON of exactly five members (docs/wire-format.md "client_sig").
 * Sign bytes, never objects: {@link clientSigMessage} is the one place that builds the message.
 */
import { timingSafeEqual } from 'node:crypto';
import { canonicalize } from '../canonical-json.js';
import { UnsignableRecordError } from './errors.js';
import type { SigningKey } from './keys.js';

export const CLIENT_SIG_ALGO = 'hmac-sha256';

/** The members of an evidence record that `client_sig` covers. */
export interface ClientSignedMembers {
  occurred_at?: unknown;
  payload?: unknown;
  record_type?: unknown;
  system_name?: unknown;
}

export { UnsignableRecordError };

/** The exact string that `client_sig` signs: canonical JSON of the five members (docs/wire-format.md "client_sig" steps 1–2). */
export function clientSigMessage(record: ClientSignedMembers, workspaceId: string): string {
  if (typeof record.occurred_at !== 'string') throw new UnsignableRecordError('occurred_at must be set before a record is signed: the signature covers it');
  return canonicalize({
    occurred_at: record.occurred_at,
    payload: record.payload,
    record_type: record.record_type,
    system_name: record.system_name,
    workspace_id: workspaceId,
  });
}

/** Lower-case hex `client_sig` of a record in a workspace (docs/wire-format.md "client_sig" steps 3–4). */
export function signClientSig(record: ClientSignedMembers, workspaceId: string, key: SigningKey): string {
  return key.hmacHex(clientSigMessage(record, workspaceId));
}

/** Constant-time comparison of two hex MACs; false for anything that is not equal-length hex. */
export function hexDigestsEqual(a: string, b: string): boolean {
  if (typeof a !== 'string' || typeof b !== 'string' || a.length !== b.length || !/^[0-9a-fA-F]*$/.test(a)) return false;
  const left = Buffer.from(a.toLowerCase(), 'hex');
  const right = Buffer.from(b.toLowerCase(), 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Whether `client_sig` verifies for this record, workspace and key. Never throws on bad input. */
export function verifyClientSig(record: ClientSignedMembers & { client_sig?: unknown }, workspaceId: string, key: SigningKey): boolean {
  if (typeof record.client_sig !== 'string' || typeof record.occurred_at !== 'string') return false;
  let expected: string;
  try {
    expected = signClientSig(record, workspaceId, key);
  } catch {
    return false;
  }
  return hexDigestsEqual(expected, record.client_sig);
}
