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
import { legacyWitnessMessage, validateAttestation, witnessTexts, type JsonValue, type WitnessForm } from '../../core/index.js';
import { authOf, chargeRecords } from '../auth.js';
import { HttpError, invalidField, validationFailed } from '../errors.js';
import { newId } from '../ids.js';
import { BATCH_BODY_LIMIT, bodyObject, type JsonObject } from '../json-body.js';
import type { AttestationRow } from '../store/index.js';
import { witnessForm, type WitnessJob } from '../witness.js';
import type { IdempotencyClaim, IdempotencyHit } from '../store/index.js';
import { claimOf, headerKey, IDEMPOTENCY_HEADER, ITEM_KEY_MEMBER, keyConflict, replayOrConflict, splitItemKey } from './idempotency.js';
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

/** An attestation that passed validation, with the signature check it still needs. */
interface CheckedAttestation {
  record: JsonObject;
  /** its canonical text, as stored */
  stored: string;
  /** the signature to check, when it carries one */
  job: WitnessJob | null;
  /** the item's path in the body (`records.3` in a batch), for `field` */
  prefix: string;
}

/**
 * Validates one attestation and writes its canonical texts.
 * @throws HttpError 422 naming the first bad field
 */
function checkAttestation(item: JsonValue, prefix: string, ingest: Ingest): CheckedAttestation {
  const issues = validateAttestation(item, prefix);
  if (issues.length === 0) issues.push(...wellFormedIssues(item as JsonObject, ['system_name', 'agent_name', 'tool_name'], prefix));
  if (issues.length > 0) throw validationFailed(issues);
  const record = item as JsonObject;

  let texts: { stored: string; message: string };
  try {
    texts = witnessTexts(record, ingest.workspaceId);
  } catch (error) {
    throw new HttpError(422, 'validation_error', `the attestation cannot be written as canonical JSON: ${(error as Error).message}`, prefix || undefined);
  }
  // Validation has checked that witness_sig, when present, is a hex signature with a hex key beside it.
  const sig = record.witness_sig;
  const job =
    sig !== undefined && sig !== null
      ? { canonical: texts.message, legacy: legacyWitnessMessage(record), signature: sig as string, publicKey: record.verifying_key_hex as string }
      : null;
  return { record, stored: texts.stored, job, prefix };
}

/**
 * Builds the row of a checked attestation once its signature's form is known.
 * @param form what the signature verified under (null: it did not, or there is none)
 * @throws HttpError 422 on `witness_sig` when the attestation is signed and the signature does not verify
 */
function attestationRow({ record, stored, job, prefix }: CheckedAttestation, form: WitnessForm | null, ingest: Ingest): { row: AttestationRow; result: AttestationResult } {
  if (job !== null && form === null) {
    throw invalidField(
      prefix ? `${prefix}.witness_sig` : 'witness_sig',
      'does not verify with verifying_key_hex over this attestation in this workspace (neither the canonical nor the legacy message form)',
    );
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
    record: stored,
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

export function registerAttestationRoutes(app: FastifyInstance, { store, nowMs, verifyPool }: RouteDeps): void {
  app.post(`${WORKSPACE_PREFIX}/attestations/external`, async (request: FastifyRequest, reply: FastifyReply) => {
    const ingest = ingestOf(request, nowMs);
    await chargeRecords(request, 1);
    const key = headerKey(request);
    const body = bodyObject(request);
    // The idempotency key first: a repeat gets the first write's result before any other check.
    const claim = claimOf('attestation', key, body);
    const earlier = claim && store.idempotency.find(ingest.workspaceId, claim, ingest.receivedMs);
    if (earlier) return replayOrConflict(earlier, IDEMPOTENCY_HEADER, key!, reply);
    const checked = checkAttestation(body, '', ingest);
    // One signature: checked here, where a hop to a worker would cost more than it saves.
    const { row, result } = attestationRow(checked, checked.job ? witnessForm(checked.job) : null, ingest);
    const [stored] = await store.recordAttestations([row], [claim]);
    if (stored!.hit) return replayOrConflict(stored!.hit, IDEMPOTENCY_HEADER, key!, reply);
    const ledgerIndex = stored!.leafIndex;
    void reply.code(201);
    return { ...result, ledger_index: ledgerIndex };
  });

  app.post(`${WORKSPACE_PREFIX}/attestations/batch`, { bodyLimit: BATCH_BODY_LIMIT }, async (request: FastifyRequest) => {
    const ingest = ingestOf(request, nowMs);
    const records = bodyObject(request).records;
    if (records === undefined || records === null) throw invalidField('records', 'is required: an array of attestations');
    if (!Array.isArray(records)) throw invalidField('records', 'must be an array of attestations');
    if (records.length > MAX_BATCH_SIZE) throw invalidField('records', `must hold at most ${MAX_BATCH_SIZE} attestations; split the batch`);
    await chargeRecords(request, records.length);

    // Each item alone: validated here, its signature checked with the others (on the verify pool's
    // workers and in this thread at once).
    const rejected = (index: number, error: unknown) => {
      if (!(error instanceof HttpError)) throw error;
      // `reason` repeats `message` for clients that read it (docs/service.md, "Extensions")
      const body = error.body();
      return { index, status: 'rejected', ...body, reason: body.message };
    };
    // Idempotency keys first: an item whose key is already used is answered with what the key
    // stands for, before its other checks (docs/service.md "Idempotency").
    const claims: (IdempotencyClaim | undefined)[] = [];
    const keys: (string | undefined)[] = [];
    const checked = records.map((sent, index) => {
      try {
        const { item, key } = splitItemKey(sent, `records.${index}`);
        const claim = claimOf('attestation', key, item);
        const earlier = claim && store.idempotency.find(ingest.workspaceId, claim, ingest.receivedMs);
        if (earlier) return earlierOutcome(index, earlier, key!);
        claims[index] = claim;
        keys[index] = key;
        return checkAttestation(item, `records.${index}`, ingest);
      } catch (error) {
        return rejected(index, error);
      }
    });
    const jobs: WitnessJob[] = [];
    for (const item of checked) if ('job' in item && item.job !== null) jobs.push(item.job);
    const forms = verifyPool ? verifyPool.verify(jobs) : jobs.map(witnessForm);

    const rows: AttestationRow[] = [];
    const rowClaims: (IdempotencyClaim | undefined)[] = [];
    const rowIndexes: number[] = [];
    let next = 0;
    const results: Record<string, unknown>[] = checked.map((item, index) => {
      if (!('job' in item)) return item;
      try {
        const { row, result } = attestationRow(item, item.job === null ? null : forms[next++]!, ingest);
        rows.push(row);
        rowClaims.push(claims[index]);
        rowIndexes.push(index);
        return { index, status: 'accepted', attestation_id: result.attestation_id, trust_tier: result.trust_tier, external_verified: result.external_verified };
      } catch (error) {
        return rejected(index, error);
      }
    });
    const outcomes = rows.length > 0 ? await store.recordAttestations(rows, rowClaims) : [];
    // A key used twice in the batch, or by a request that committed meanwhile: not stored.
    outcomes.forEach(({ hit, leafIndex }, i) => {
      const index = rowIndexes[i]!;
      if (hit !== null) results[index] = earlierOutcome(index, hit, keys[index]!);
      else results[index]!.ledger_index = leafIndex;
    });
    const accepted = results.filter((item) => item.status === 'accepted').length;
    const replayed = results.filter((item) => 'replayed' in item).length;
    // `replayed` only when some were: the body is otherwise the specification's (§4.5).
    return replayed > 0 ? { accepted, rejected: records.length - accepted, replayed, results } : { accepted, rejected: records.length - accepted, results };

    /** A batch item whose key was already used: the result it stands for, or rejected on the key. */
    function earlierOutcome(index: number, hit: IdempotencyHit, key: string) {
      if (hit.kind === 'conflict') return rejected(index, keyConflict(`records.${index}.${ITEM_KEY_MEMBER}`, key));
      return { index, status: 'accepted', ...hit.result, replayed: true };
    }
  });
}
