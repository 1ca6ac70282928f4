/**
 * Attestations (spec §4.4, §4.5; wire.md §4). `witness_sig`, when present, is verified against
 * `verifying_key_hex` in either message form (canonical or legacy) and the form is stored:
 * verified → `witnessed`, absent → `declared`, present but not verifying → 422 on `witness_sig`.
 * Each attestation is stored as sent, as canonical JSON text, signature included.
 *
 * The batch endpoint is not all-or-nothing: every item is judged alone, the accepted ones are
 * stored together in one transaction, and each gets its own result.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { canonicalize, legacyWitnessMessage, validateAttestation, witnessMessage, type JsonValue, type WitnessForm } from '../../core/index.js';
import { authOf } from '../auth.js';
import { HttpError, invalidField, validationFailed } from '../errors.js';
import { newId } from '../ids.js';
import { BATCH_BODY_LIMIT, bodyObject, type JsonObject } from '../json-body.js';
import type { AttestationRow } from '../store/index.js';
import { witnessForm } from '../witness.js';
import { isoFromMs, sourceOf, wellFormedIssues, WORKSPACE_PREFIX, type RouteDeps, type Source } from './deps.js';

/** Most attestations in one batch request. */
export const MAX_BATCH_SIZE = 1000;

/** The attestation result of spec §2.6. */
export interface AttestationResult {
  attestation_id: string;
  external_verified: boolean;
  trust_tier: 'witnessed' | 'declared';
  detail: 'ok';
}

interface Ingest {
  workspaceId: string;
  receivedMs: number;
  /** receivedMs as the wire writes it, computed once per request */
  receivedAt: string;
  source: Source;
}

function ingestOf(request: FastifyRequest, nowMs: () => number): Ingest {
  const receivedMs = nowMs();
  return { workspaceId: authOf(request).workspaceId, receivedMs, receivedAt: isoFromMs(receivedMs), source: sourceOf(request) };
}

/** Members left out of the signed message (wire.md §4); `workspace_id` is replaced by the workspace's. */
const UNSIGNED_MEMBERS = new Set(['witness_sig', 'verifying_key_hex', 'workspace_id']);

const SURROGATE = /[\ud800-\udfff]/;

/**
 * The attestation's canonical text as sent (what is stored) and the canonical message its
 * `witness_sig` covers (core's `witnessMessage`: without `witness_sig` and `verifying_key_hex`, with
 * `workspace_id` set to the workspace), from one canonicalisation of each member rather than two
 * of the whole record. Both are `{` + the sorted `"key":value` members + `}`, exactly as
 * `canonicalize` writes them; a key with a surrogate (code point order differs from code unit
 * order) takes core's functions instead.
 * @throws CanonicalJsonError when a member cannot be written as canonical JSON
 */
export function attestationTexts(record: JsonObject, workspaceId: string): { stored: string; message: string } {
  const keys = Object.keys(record);
  let odd = false;
  for (const key of keys) if (SURROGATE.test(key)) odd = true;
  if (odd) return { stored: canonicalize(record), message: witnessMessage(record, workspaceId) };
  if (!keys.includes('workspace_id')) keys.push('workspace_id');
  keys.sort(); // code unit order: code point order, since no key holds a surrogate
  let stored = '';
  let message = '';
  for (const key of keys) {
    const value = record[key];
    const quotedKey = canonicalize(key);
    const text = value === undefined ? undefined : canonicalize(value);
    if (text !== undefined) stored += `${stored ? ',' : ''}${quotedKey}:${text}`;
    if (key === 'workspace_id') message += `${message ? ',' : ''}${quotedKey}:${canonicalize(workspaceId)}`;
    else if (text !== undefined && !UNSIGNED_MEMBERS.has(key)) message += `${message ? ',' : ''}${quotedKey}:${text}`;
  }
  return { stored: `{${stored}}`, message: `{${message}}` };
}

/**
 * Checks one attestation and builds its row.
 * @param prefix the item's path in the body (`records.3` in a batch), for `field`
 * @throws HttpError 422 naming the first bad field
 */
function prepareAttestation(item: JsonValue, prefix: string, ingest: Ingest): { row: AttestationRow; result: AttestationResult } {
  const at = (key: string) => (prefix ? `${prefix}.${key}` : key);
  const issues = validateAttestation(item, prefix);
  if (issues.length === 0) issues.push(...wellFormedIssues(item as JsonObject, ['system_name', 'agent_name', 'tool_name'], prefix));
  if (issues.length > 0) throw validationFailed(issues);
  const record = item as JsonObject;

  let texts: { stored: string; message: string };
  try {
    texts = attestationTexts(record, ingest.workspaceId);
  } catch (error) {
    throw new HttpError(422, 'validation_error', `the attestation cannot be written as canonical JSON: ${(error as Error).message}`, prefix || undefined);
  }
  // Validation has checked that witness_sig, when present, is a hex signature with a hex key beside it.
  let form: WitnessForm | null = null;
  const sig = record.witness_sig;
  if (sig !== undefined && sig !== null) {
    form = witnessForm({ canonical: texts.message, legacy: legacyWitnessMessage(record), signature: sig as string, publicKey: record.verifying_key_hex as string });
    if (form === null) {
      throw invalidField(
        at('witness_sig'),
        'does not verify with verifying_key_hex over this attestation in this workspace (neither the canonical nor the legacy message form)',
      );
    }
  }

  const receivedAt = ingest.receivedAt;
  const executedAt = typeof record.executed_at === 'string' ? record.executed_at : receivedAt;
  const systemName = record.system_name as string;
  const row: AttestationRow = {
    attestation_id: newId('att'),
    workspace_id: ingest.workspaceId,
    system_name: systemName,
    agent_name: typeof record.agent_name === 'string' ? record.agent_name : systemName,
    tool_name: record.tool_name as string,
    input_hash: record.input_hash as string,
    output_hash: record.output_hash as string,
    executed_at: executedAt,
    executed_ms: Date.parse(executedAt),
    record: texts.stored,
    witness_form: form,
    trust_tier: form ? 'witnessed' : 'declared',
    source: ingest.source,
    received_at: receivedAt,
    received_ms: ingest.receivedMs,
  };
  return {
    row,
    result: { attestation_id: row.attestation_id, external_verified: form !== null, trust_tier: row.trust_tier, detail: 'ok' },
  };
}

export function registerAttestationRoutes(app: FastifyInstance, { store, nowMs }: RouteDeps): void {
  app.post(`${WORKSPACE_PREFIX}/attestations/external`, async (request: FastifyRequest, reply: FastifyReply) => {
    const ingest = ingestOf(request, nowMs);
    const { row, result } = prepareAttestation(bodyObject(request), '', ingest);
    await store.recordAttestations([row]);
    void reply.code(201);
    return result;
  });

  app.post(`${WORKSPACE_PREFIX}/attestations/batch`, { bodyLimit: BATCH_BODY_LIMIT }, async (request: FastifyRequest) => {
    const ingest = ingestOf(request, nowMs);
    const records = bodyObject(request).records;
    if (records === undefined || records === null) throw invalidField('records', 'is required: an array of attestations');
    if (!Array.isArray(records)) throw invalidField('records', 'must be an array of attestations');
    if (records.length > MAX_BATCH_SIZE) throw invalidField('records', `must hold at most ${MAX_BATCH_SIZE} attestations; split the batch`);

    const rows: AttestationRow[] = [];
    const results = records.map((item, index) => {
      try {
        const { row, result } = prepareAttestation(item, `records.${index}`, ingest);
        rows.push(row);
        return { index, status: 'accepted', attestation_id: result.attestation_id, trust_tier: result.trust_tier, external_verified: result.external_verified };
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        return { index, status: 'rejected', ...error.body() };
      }
    });
    if (rows.length > 0) await store.recordAttestations(rows);
    return { accepted: rows.length, rejected: records.length - rows.length, results };
  });
}
