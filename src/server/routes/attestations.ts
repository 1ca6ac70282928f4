/**
 * Attestations (docs/service.md, the attestation endpoints; docs/wire-format.md "witness_sig"). `witness_sig`, when present, is verified against
 * `verifying_key_hex` in either message form (canonical, or legacy when `executed_at` is present)
 * and the form is stored; present but not verifying → 422 on `witness_sig`. A verified signature
 * earns `witnessed` under the workspace's key policy (docs/security.md): `open`, any key;
 * `registered`, a registered unrevoked key signing the canonical form, else `declared` with the
 * reason in `detail`. No signature → `declared`. A signature is accepted once in the whole
 * service: a replay is a 422 on `witness_sig` and stores nothing (the database enforces it).
 * Each attestation is stored as sent, as canonical JSON text, signature included, with its key's
 * fingerprint.
 *
 * The batch endpoint is not all-or-nothing: every item is judged alone, the accepted ones are
 * stored together in one transaction, and each gets its own result.
 *
 * Reads (the service's extension): GET attestations lists them newest first with a cursor, GET
 * attestations/{attestation_id} returns one; both splice in the stored canonical text unparsed and
 * give the exact text the signature covers, so anyone can check it again.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  DAY_MS,
  isDateTime,
  keyFingerprint,
  validateAttestation,
  witnessFormOf,
  witnessJob,
  witnessTexts,
  type JsonValue,
  type WitnessForm,
  type WitnessJob,
} from '../../core/index.js';
import { authOf, chargeRecords, inTurns } from '../auth.js';
import { HttpError, invalidField, notFound, validationFailed } from '../errors.js';
import { BATCH_BODY_LIMIT, bodyObject, type JsonObject } from '../json-body.js';
import { integerParam, textParam, type Query } from '../query.js';
import type { AttestationRow, IdempotencyClaim, IdempotencyHit, KeyPolicy, TierReason } from '../store/rows.js';
import type { Store } from '../store/store.js';
import { attestationView, signatureFacts, TIER_REASONS } from '../store/record-views.js';
import { claimOf, headerKey, IDEMPOTENCY_HEADER, ITEM_KEY_MEMBER, keyConflict, replayOrConflict, splitItemKey } from './idempotency.js';
import { isoFromMs, sourceOf, wellFormedIssues, WORKSPACE_PREFIX, type RouteDeps, type Source } from './deps.js';

/** Most attestations in one batch request. */
export const MAX_BATCH_SIZE = 1000;

/** The attestation result of docs/service.md "POST …/attestations/external". */
export interface AttestationResult {
  attestation_id: string;
  external_verified: boolean;
  trust_tier: 'witnessed' | 'declared';
  /** `ok`, or why a verified signature earned only `declared` */
  detail: string;
}

const REPLAY_MESSAGE = 'has been accepted before: a witness signature is accepted once in the whole service (sign each attestation anew)';

interface Ingest {
  workspaceId: string;
  receivedMs: number;
  /** receivedMs as the wire writes it, computed once per request */
  receivedAt: string;
  source: Source;
  /** the workspace's key policy, read once per request */
  policy: KeyPolicy;
  store: Store;
}

async function ingestOf(request: FastifyRequest, nowMs: () => number, store: Store): Promise<Ingest> {
  const receivedMs = nowMs();
  const workspaceId = authOf(request).workspaceId;
  return { workspaceId, receivedMs, receivedAt: isoFromMs(receivedMs), source: sourceOf(request), policy: await store.signingKeys.policy(workspaceId), store };
}

type KeyStatus = 'active' | 'revoked' | 'unregistered';

/**
 * The registry's word on a checked attestation's key, when the workspace's policy asks for it
 * (`registered`); null otherwise, without a look-up.
 */
function keyStatusOf({ job }: CheckedAttestation, ingest: Ingest): Promise<KeyStatus> | null {
  if (ingest.policy === 'open' || job === null) return null;
  return ingest.store.signingKeys.status(ingest.workspaceId, keyFingerprint(job.publicKey));
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
  return { record, stored: texts.stored, job: witnessJob(record, ingest.workspaceId, texts.message), prefix };
}

/**
 * Builds the row of a checked attestation once its signature's form is known.
 * @param form what the signature verified under (null: it did not, or there is none)
 * @param keyStatus the key's status in the registry (keyStatusOf; null: the policy does not ask)
 * @throws HttpError 422 on `witness_sig` when the attestation is signed and the signature does not verify
 */
function attestationRow(
  { record, stored, job, prefix }: CheckedAttestation,
  form: WitnessForm | null,
  keyStatus: KeyStatus | null,
  ingest: Ingest,
): { row: AttestationRow; result: AttestationResult } {
  if (job !== null && form === null) {
    throw invalidField(
      prefix ? `${prefix}.witness_sig` : 'witness_sig',
      'does not verify with verifying_key_hex over this attestation in this workspace (neither the canonical message form nor, with executed_at, the legacy one)',
    );
  }
  const fingerprint = job === null ? null : keyFingerprint(job.publicKey);
  const reason = form === null || fingerprint === null ? null : tierReason(ingest, keyStatus, form);
  const receivedAt = ingest.receivedAt;
  const executedAt = typeof record.executed_at === 'string' ? record.executed_at : receivedAt;
  const systemName = record.system_name as string;
  const row: AttestationRow = {
    attestation_id: ingest.store.newId('att'),
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
    witness_sig: job === null ? null : Buffer.from(job.signature, 'hex'),
    // what the signed message says of executed_at (both forms cover its text when present)
    signed_ms: job === null ? null : typeof record.executed_at === 'string' ? Date.parse(record.executed_at) : 0,
    key_fingerprint: fingerprint,
    trust_tier: form !== null && reason === null ? 'witnessed' : 'declared',
    tier_reason: reason,
    source: ingest.source,
    received_at: receivedAt,
    received_ms: ingest.receivedMs,
    signature_facts: signatureFacts(record, job, form),
  };
  return {
    row,
    result: {
      attestation_id: row.attestation_id,
      external_verified: form !== null,
      trust_tier: row.trust_tier,
      detail: reason === null ? 'ok' : TIER_REASONS[reason],
    },
  };
}

/** Why a verified signature earns only `declared` under the workspace's policy, or null when it earns `witnessed`. */
function tierReason(ingest: Ingest, status: KeyStatus | null, form: WitnessForm): TierReason | null {
  if (ingest.policy === 'open' || status === null) return null;
  if (status !== 'active') return status === 'revoked' ? 'revoked_key' : 'unregistered_key';
  return form === 'legacy' ? 'legacy_form' : null;
}

export function registerAttestationRoutes(app: FastifyInstance, { store, nowMs, verifyPool }: RouteDeps): void {
  // its one record is charged with the request (auth.ts, recordsPerRequest)
  app.post(`${WORKSPACE_PREFIX}/attestations/external`, { config: { recordsPerRequest: 1 } }, async (request: FastifyRequest, reply: FastifyReply) => {
    const ingest = await ingestOf(request, nowMs, store);
    const key = headerKey(request);
    const body = bodyObject(request);
    // The idempotency key first: a repeat gets the first write's result before any other check.
    const claim = claimOf('attestation', key, body);
    const earlier = claim && (await store.findIdempotent(ingest.workspaceId, claim, ingest.receivedMs));
    if (earlier) return replayOrConflict(earlier, IDEMPOTENCY_HEADER, key!, reply);
    const checked = checkAttestation(body, '', ingest);
    // One signature: checked here, where a hop to a worker would cost more than it saves.
    const keyStatus = keyStatusOf(checked, ingest);
    const { row, result } = attestationRow(checked, checked.job ? witnessFormOf(checked.job) : null, keyStatus === null ? null : await keyStatus, ingest);
    const [stored] = await store.recordAttestations([row], [claim]);
    if (stored === null) throw invalidField('witness_sig', REPLAY_MESSAGE);
    if (stored.hit) return replayOrConflict(stored.hit, IDEMPOTENCY_HEADER, key!, reply);
    const ledgerIndex = stored.leafIndex;
    void reply.code(201);
    return { ...result, ledger_index: ledgerIndex };
  });

  app.post(`${WORKSPACE_PREFIX}/attestations/batch`, { bodyLimit: BATCH_BODY_LIMIT }, async (request: FastifyRequest) => {
    const ingest = await ingestOf(request, nowMs, store);
    const records = bodyObject(request).records;
    if (records === undefined || records === null) throw invalidField('records', 'is required: an array of attestations');
    if (!Array.isArray(records)) throw invalidField('records', 'must be an array of attestations');
    if (records.length > MAX_BATCH_SIZE) throw invalidField('records', `must hold at most ${MAX_BATCH_SIZE} attestations; split the batch`);
    await chargeRecords(request, records.length);

    // Each item alone: validated here, its signature checked with the others of its chunk (on the
    // verify pool's workers and in this thread at once). Chunk by chunk, each in a turn of the event
    // loop of its own (inTurns), so other tenants' requests are answered between two chunks.
    const rejected = (index: number, error: unknown) => {
      if (!(error instanceof HttpError)) throw error;
      // `reason` repeats `message` for clients that read it (docs/service.md, "Extensions")
      const body = error.body();
      return { index, status: 'rejected', ...body, reason: body.message };
    };
    const results: Record<string, unknown>[] = new Array(records.length);
    const claims: (IdempotencyClaim | undefined)[] = [];
    const itemKeys: (string | undefined)[] = [];
    const rows: AttestationRow[] = [];
    const rowClaims: (IdempotencyClaim | undefined)[] = [];
    /** the index in `results` of each row */
    const rowAt: number[] = [];
    // Idempotency keys first: an item whose key is already used is answered with what the key
    // stands for, before its other checks (docs/service.md "Idempotency").
    const checkItem = async (index: number) => {
      try {
        const { item, key } = splitItemKey(records[index], `records.${index}`);
        const claim = claimOf('attestation', key, item);
        const earlier = claim && (await store.findIdempotent(ingest.workspaceId, claim, ingest.receivedMs));
        if (earlier) return earlierOutcome(index, earlier, key!);
        claims[index] = claim;
        itemKeys[index] = key;
        return checkAttestation(item, `records.${index}`, ingest);
      } catch (error) {
        return rejected(index, error);
      }
    };
    await inTurns(request, records.length, async (from, to) => {
      const checked: Awaited<ReturnType<typeof checkItem>>[] = [];
      for (let index = from; index < to; index += 1) checked.push(await checkItem(index));
      const jobs: WitnessJob[] = [];
      for (const item of checked) if ('job' in item && item.job !== null) jobs.push(item.job);
      const forms = verifyPool ? verifyPool.verify(jobs) : jobs.map(witnessFormOf);

      let next = 0;
      for (const [offset, item] of checked.entries()) {
        const index = from + offset;
        if (!('job' in item)) {
          results[index] = item;
          continue;
        }
        try {
          const form = item.job === null ? null : forms[next++]!;
          const keyStatus = keyStatusOf(item, ingest);
          const { row, result } = attestationRow(item, form, keyStatus === null ? null : await keyStatus, ingest);
          rows.push(row);
          rowClaims.push(claims[index]);
          rowAt.push(index);
          const accepted: Record<string, unknown> = {
            index,
            status: 'accepted',
            attestation_id: result.attestation_id,
            trust_tier: result.trust_tier,
            external_verified: result.external_verified,
          };
          if (result.detail !== 'ok') accepted.detail = result.detail;
          results[index] = accepted;
        } catch (error) {
          results[index] = rejected(index, error);
        }
      }
    });
    const outcomes = rows.length > 0 ? await store.recordAttestations(rows, rowClaims) : [];
    outcomes.forEach((outcome, i) => {
      const index = rowAt[i];
      // A signature stored already (also earlier in this batch): a replay, nothing stored.
      if (outcome === null) results[index] = rejected(index, invalidField(`records.${index}.witness_sig`, REPLAY_MESSAGE));
      // A key used twice in the batch, or by a request that committed meanwhile: not stored.
      else if (outcome.hit !== null) results[index] = earlierOutcome(index, outcome.hit, itemKeys[index]!);
      else results[index].ledger_index = outcome.leafIndex;
    });
    const accepted = results.filter((item) => item.status === 'accepted').length;
    const replayed = results.filter((item) => 'replayed' in item).length;
    // `replayed` only when some were: the body is otherwise the interface's (docs/service.md "POST …/attestations/batch").
    return replayed > 0 ? { accepted, rejected: records.length - accepted, replayed, results } : { accepted, rejected: records.length - accepted, results };

    /** A batch item whose key was already used: the result it stands for, or rejected on the key. */
    function earlierOutcome(index: number, hit: IdempotencyHit, key: string) {
      if (hit.kind === 'conflict') return rejected(index, keyConflict(`records.${index}.${ITEM_KEY_MEMBER}`, key));
      return { index, status: 'accepted', ...hit.result, replayed: true };
    }
  });

  app.get(`${WORKSPACE_PREFIX}/attestations`, async (request: FastifyRequest, reply: FastifyReply) => {
    const { workspaceId } = authOf(request);
    const query = request.query as Query;
    const systemName = textParam(query, 'system_name');
    const toolName = textParam(query, 'tool_name');
    const since = timeParam(query, 'since');
    const until = timeParam(query, 'until');
    if (since !== undefined && query.days !== undefined) throw invalidField('days', 'cannot be given with since');
    const days = integerParam(query, 'days', LIST_DEFAULT_DAYS, 1, LIST_MAX_DAYS);
    const limit = integerParam(query, 'limit', LIST_DEFAULT_LIMIT, 1, LIST_MAX_LIMIT);
    const cursorText = textParam(query, 'cursor', 256);
    const afterId = cursorText === undefined ? undefined : decodeAttestationCursor(cursorText);
    const unknownCursor = () => invalidField('cursor', 'is not a cursor this service issued (use next_cursor from the previous page)');
    if (afterId === null) throw unknownCursor();

    const rows = await store.attestations.list({
      workspaceId,
      sinceMs: since ?? nowMs() - days * DAY_MS,
      untilMs: until ?? Number.MAX_SAFE_INTEGER,
      limit,
      ...(systemName !== undefined ? { systemName } : {}),
      ...(toolName !== undefined ? { toolName } : {}),
      ...(afterId !== undefined ? { afterId } : {}),
    });
    if (rows === null) throw unknownCursor();
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const items = page.map((row) => attestationView(row, workspaceId)).join(',');
    const cursor = more ? `,"next_cursor":${JSON.stringify(encodeAttestationCursor(page[page.length - 1].attestation_id))}` : '';
    void reply.type('application/json; charset=utf-8');
    return `{"attestations":[${items}]${cursor}}`;
  });

  app.get(`${WORKSPACE_PREFIX}/attestations/:attestation_id`, async (request: FastifyRequest, reply: FastifyReply) => {
    const { workspaceId } = authOf(request);
    const { attestation_id: attestationId } = request.params as { attestation_id: string };
    const row = await store.attestations.get(workspaceId, attestationId);
    if (!row) throw notFound('attestation not found');
    void reply.type('application/json; charset=utf-8');
    return attestationView(row, workspaceId);
  });
}

/** Attestation list defaults and limits: as the evidence list's (docs/service.md "Limits"). */
export const LIST_DEFAULT_DAYS = 90;
export const LIST_MAX_DAYS = 36_500;
export const LIST_DEFAULT_LIMIT = 50;
export const LIST_MAX_LIMIT = 200;

/** `since` / `until`: an ISO 8601 date and time, as epoch ms; undefined when absent. */
function timeParam(query: Query, name: string): number | undefined {
  const text = textParam(query, name, 64);
  if (text === undefined) return undefined;
  if (!isDateTime(text)) throw invalidField(name, 'must be an ISO 8601 date and time, e.g. 2026-01-31T09:30:00Z');
  return Date.parse(text);
}

/** The opaque cursor: base64url of the last attestation id of a page; the store finds where it stands. */
function encodeAttestationCursor(attestationId: string): string {
  return Buffer.from(JSON.stringify(['att', attestationId]), 'utf8').toString('base64url');
}

function decodeAttestationCursor(cursor: string): string | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && value[0] === 'att' && typeof value[1] === 'string' && value[1].length <= 64) return value[1];
  } catch {
    // not base64url JSON: answered by the caller
  }
  return null;
}
