/**
 * Idempotency keys (docs/service.md "Idempotency"). A write that carries a key
 * leaves it here in the same transaction as its record, with a hash of the content sent and the
 * result the write got. A repeat of the key with the same content is answered with that result
 * and stores nothing; with other content it is refused. Keys are per workspace and are kept for
 * {@link IDEMPOTENCY_RETENTION_MS}; older ones are pruned by the writes that add keys.
 *
 * This module holds what every backend shares: the key's form, the content hash and the retention;
 * a backend stores and finds keys (the SQLite one in sqlite/idempotency.ts).
 */
import { createHash } from 'node:crypto';
import type { AttestationRow, EvidenceRow } from './rows.js';
export type { IdempotencyClaim, IdempotencyHit } from './rows.js';

/** How long a key is honoured: 24 hours after the write that left it. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** Longest key accepted, in characters (printable ASCII). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;

const KEY_FORM = /^[\x21-\x7e]+$/;

/** Why a key cannot be used, or null when it can. */
export function idempotencyKeyProblem(key: unknown): string | null {
  if (typeof key !== 'string') return 'must be a string';
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) return `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`;
  if (!KEY_FORM.test(key)) return 'must be printable ASCII without spaces';
  return null;
}

/**
 * The hash a key is compared by: SHA-256 (hex) of the kind of write and the canonical JSON text
 * of the content as sent, without its `idempotency_key` member. The kind keeps an attestation
 * and an evidence record from ever being the same content.
 */
export function contentHash(kind: 'evidence' | 'attestation', canonicalText: string): string {
  return createHash('sha256').update(kind).update('\n').update(canonicalText).digest('hex');
}

/** The result an evidence write's idempotency key is remembered with (and replayed as). */
export function evidenceResult(row: EvidenceRow, controls: readonly string[], leafIndex: number): Record<string, unknown> {
  return { record_id: row.record_id, record_type: row.record_type, mapped_controls: controls, detail: 'ok', ledger_index: leafIndex };
}

/** The result an attestation's idempotency key is remembered with (and replayed as). */
export function attestationResult(row: AttestationRow, leafIndex: number): Record<string, unknown> {
  return {
    attestation_id: row.attestation_id,
    external_verified: row.witness_form !== null,
    trust_tier: row.trust_tier,
    detail: 'ok',
    ledger_index: leafIndex,
  };
}
