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
import { canonicalize, validateAttestation, verifyWitness, type JsonValue } from '../../core/index.js';
import { authOf } from '../auth.js';
import { HttpError, invalidField, validationFailed } from '../errors.js';
import { newId } from '../ids.js';
import { BATCH_BODY_LIMIT, bodyObject, type JsonObject } from '../json-body.js';
import type { AttestationRow } from '../store/index.js';
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
  source: Source;
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

  let text: string;
  try {
    text = canonicalize(record);
  } catch (error) {
    throw new HttpError(422, 'validation_error', `the attestation cannot be written as canonical JSON: ${(error as Error).message}`, prefix || undefined);
  }
  const signed = record.witness_sig !== undefined && record.witness_sig !== null;
  const form = signed ? verifyWitness(record, ingest.workspaceId) : null;
  if (signed && form === null) {
    throw invalidField(
      at('witness_sig'),
      'does not verify with verifying_key_hex over this attestation in this workspace (neither the canonical nor the legacy message form)',
    );
  }

  const receivedAt = isoFromMs(ingest.receivedMs);
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
    record: text,
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
    const ingest = { workspaceId: authOf(request).workspaceId, receivedMs: nowMs(), source: sourceOf(request) };
    const { row, result } = prepareAttestation(bodyObject(request), '', ingest);
    await store.recordAttestations([row]);
    void reply.code(201);
    return result;
  });

  app.post(`${WORKSPACE_PREFIX}/attestations/batch`, { bodyLimit: BATCH_BODY_LIMIT }, async (request: FastifyRequest) => {
    const ingest = { workspaceId: authOf(request).workspaceId, receivedMs: nowMs(), source: sourceOf(request) };
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
