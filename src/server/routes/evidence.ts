/**
 * GRC evidence (docs/service.md "POST …/grc/evidence"; docs/service.md "GET …/grc/evidence") and the single-record extension:
 * - POST grc/evidence[?dry_run=true] stores one record (append-only; nothing updates or deletes);
 * - POST grc/evidence/batch[?dry_run=true] stores many, each judged alone (extension);
 * - GET grc/evidence/export streams every stored record as NDJSON, oldest first (extension);
 * - an `Idempotency-Key` (or a batch item's `idempotency_key`) makes a write repeatable (extension);
 * - GET grc/evidence lists records, newest first, with an opaque `next_cursor` (extension);
 * - GET grc/evidence/{record_id} returns one whole stored record (extension), its payload spliced
 *   in as the stored canonical text so that `client_sig` verifies on what an auditor fetches.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  canonicalize,
  controlsEarned,
  DAY_MS,
  isDateTime,
  isPlainObject,
  isRecordType,
  RECORD_TYPES,
  validateRecord,
  type JsonValue,
} from '../../core/index.js';
import { authOf, chargeRecords, inTurns } from '../auth.js';
import { HttpError, invalidField, notFound, validationFailed } from '../errors.js';
import { NIL_UUID } from '../ids.js';
import { BATCH_BODY_LIMIT, bodyObject, type JsonObject } from '../json-body.js';
import { booleanParam, integerParam, textParam, type Query } from '../query.js';
import { evidenceResult } from '../store/idempotency.js';
import type { EvidenceRow, ListPosition } from '../store/rows.js';
import type { EvidenceWrite } from '../store/store.js';
import { evidenceView } from '../store/record-views.js';
import { isoFromMs, sourceOf, wellFormedIssues, WORKSPACE_PREFIX, type RouteDeps, type Source } from './deps.js';
import { evidenceClaimOf, headerKey, IDEMPOTENCY_HEADER, ITEM_KEY_MEMBER, keyConflict, replayOrConflict, splitItemKey } from './idempotency.js';

/** Evidence list defaults and limits (docs/service.md "GET …/grc/evidence"; docs/service.md "Limits"). */
export const LIST_DEFAULT_DAYS = 90;
export const LIST_MAX_DAYS = 36_500;
export const LIST_DEFAULT_LIMIT = 50;
export const LIST_MAX_LIMIT = 200;

/**
 * The opaque cursor: base64url of `[occurred_ms, record_id]` of the last record of a page. The
 * next page starts after that record as stored (the store reads its occurred_ms and seq); a record
 * id that is not one of the workspace's records is a 422 on `cursor`.
 */
export function encodeCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.occurredMs, position.recordId]), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): ListPosition | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === 'string' && value[1].length <= 64) {
      return { occurredMs: value[0] as number, recordId: value[1] };
    }
  } catch {
    // not base64url JSON: answered below
  }
  return null;
}

function optionalText(value: JsonValue | undefined): string | null {
  return typeof value === 'string' ? value : null;
}

/** The stored record as JSON text (one home: store/record-views.ts, which the transparency log commits to). */
export const storedRecordJson = evidenceView;

/** Most records in one evidence batch request (as the attestation batch). */
export const MAX_EVIDENCE_BATCH = 1000;

/** Records an export reads per page from the database (one chunk of the reply each). */
export const EXPORT_PAGE = 512;

/** A record that passed validation, ready to be stored. */
interface CheckedRecord {
  write: EvidenceWrite;
  mappedControls: string[];
}

/**
 * Validates one record and builds its row.
 * @param prefix the item's path in the body (`records.3` in a batch), for `field`
 * @throws HttpError 422 naming the first bad field
 */
function checkRecord(
  item: JsonValue,
  prefix: string,
  ingest: { workspaceId: string; receivedMs: number; receivedAt: string; source: Source },
  canonicalPayload?: string,
): CheckedRecord {
  if (!isPlainObject(item)) throw new HttpError(422, 'validation_error', `${prefix || 'the record'} must be a JSON object`, prefix || undefined);
  const record = item;
  const issues = [...validateRecord(record), ...wellFormedIssues(record, ['system_name', 'identity', 'resource'])];
  if (issues.length > 0) throw validationFailed(prefix ? issues.map((issue) => ({ ...issue, path: `${prefix}.${issue.path}` })) : issues);
  const recordType = record.record_type as string;
  let payloadText: string;
  try {
    payloadText = canonicalPayload ?? canonicalize(record.payload);
  } catch (error) {
    throw invalidField(prefix ? `${prefix}.payload` : 'payload', `cannot be written as canonical JSON: ${(error as Error).message}`);
  }
  const mappedControls = controlsEarned(recordType, record.payload);
  // occurred_at defaults to the time of ingest (docs/wire-format.md "Evidence records"); as sent otherwise, since client_sig covers it.
  const occurredAt = optionalText(record.occurred_at) ?? ingest.receivedAt;
  const row: EvidenceRow = {
    record_id: NIL_UUID, // given when it is stored (dry runs keep the nil id)
    workspace_id: ingest.workspaceId,
    record_type: recordType,
    system_name: record.system_name as string,
    identity: optionalText(record.identity),
    resource: optionalText(record.resource),
    environment: optionalText(record.environment),
    occurred_at: occurredAt,
    occurred_ms: Date.parse(occurredAt),
    payload: payloadText,
    client_sig: optionalText(record.client_sig),
    client_sig_algo: optionalText(record.client_sig_algo),
    source: ingest.source,
    mapped_controls: JSON.stringify(mappedControls),
    received_at: ingest.receivedAt,
    received_ms: ingest.receivedMs,
  };
  const payload = record.payload as Record<string, JsonValue>;
  const riskTier = recordType === 'ai_risk_assessment' && typeof payload.risk_level === 'string' ? payload.risk_level : undefined;
  return { write: { row, controls: mappedControls, ...(riskTier !== undefined ? { riskTier } : {}) }, mappedControls };
}

/** A query parameter that is an ISO 8601 date-time, as epoch ms. */
function timeParam(query: Query, name: string): number | undefined {
  const text = textParam(query, name, 64);
  if (text === undefined) return undefined;
  if (!isDateTime(text)) throw invalidField(name, 'must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T00:00:00Z');
  return Date.parse(text);
}

/** The record_type parameter, checked against the catalogue. */
function recordTypeParam(query: Query): string | undefined {
  const recordType = textParam(query, 'record_type');
  if (recordType !== undefined && !isRecordType(recordType)) throw invalidField('record_type', `must be one of: ${RECORD_TYPES.join(', ')}`);
  return recordType;
}

export function registerEvidenceRoutes(app: FastifyInstance, { store, nowMs }: RouteDeps): void {
  const ingestOf = (request: FastifyRequest) => {
    const receivedMs = nowMs();
    return { workspaceId: authOf(request).workspaceId, receivedMs, receivedAt: isoFromMs(receivedMs), source: sourceOf(request) };
  };

  // its one record is charged with the request (auth.ts, recordsPerRequest)
  app.post(`${WORKSPACE_PREFIX}/grc/evidence`, { config: { recordsPerRequest: 1 } }, async (request: FastifyRequest, reply: FastifyReply) => {
    const ingest = ingestOf(request);
    const dryRun = booleanParam(request.query as Query, 'dry_run');
    const key = headerKey(request);
    const record = bodyObject(request);
    // The key first: a repeat is answered with what the first write got, before anything else is judged.
    const { claim, payloadText } = dryRun ? {} : evidenceClaimOf(key, record);
    const earlier = claim && (await store.findIdempotent(ingest.workspaceId, claim, ingest.receivedMs));
    if (earlier) return replayOrConflict(earlier, IDEMPOTENCY_HEADER, key!, reply);

    const { write, mappedControls } = checkRecord(record, '', ingest, payloadText);
    const recordType = write.row.record_type;
    if (dryRun) return { record_id: NIL_UUID, record_type: recordType, mapped_controls: mappedControls, detail: 'dry_run' };
    write.row.record_id = store.newId('rec');
    if (claim) write.claim = claim;
    const stored = await store.recordEvidence(write);
    // A hit only when a request with the same key committed between the look-up above and this write.
    if (stored.hit) return replayOrConflict(stored.hit, IDEMPOTENCY_HEADER, key!, reply);
    void reply.code(201);
    return evidenceResult(write.row, mappedControls, stored.leafIndex);
  });

  // Extension: many records in one request, each judged alone; the accepted ones are stored in one
  // transaction (one durable group), each with its own result, in the order sent.
  app.post(`${WORKSPACE_PREFIX}/grc/evidence/batch`, { bodyLimit: BATCH_BODY_LIMIT }, async (request: FastifyRequest) => {
    const ingest = ingestOf(request);
    const dryRun = booleanParam(request.query as Query, 'dry_run');
    const records = bodyObject(request).records;
    if (records === undefined || records === null) throw invalidField('records', 'is required: an array of evidence records');
    if (!Array.isArray(records)) throw invalidField('records', 'must be an array of evidence records');
    if (records.length > MAX_EVIDENCE_BATCH) throw invalidField('records', `must hold at most ${MAX_EVIDENCE_BATCH} records; split the batch`);
    // Every record judged costs the workspace's record budget, as a request of its own would.
    await chargeRecords(request, records.length);

    type Result = Record<string, unknown>;
    const rejected = (index: number, error: unknown): Result => {
      if (!(error instanceof HttpError)) throw error;
      return { index, status: 'rejected', ...error.body(), reason: error.message };
    };
    const accepted = (index: number, result: Result, replayed: boolean): Result =>
      replayed ? { index, status: 'accepted', ...result, replayed: true } : { index, status: 'accepted', ...result };
    const results: Result[] = new Array(records.length);
    let replays = 0;
    const writes: EvidenceWrite[] = [];
    const positions: number[] = [];
    const keys: (string | undefined)[] = [];
    const checkItem = async (index: number): Promise<void> => {
      try {
        const { item, key } = splitItemKey(records[index], `records.${index}`);
        // The key first, as for a single write: a record already stored is answered at once (a
        // re-run import costs a look-up per record, not a validation); checked again when stored.
        const { claim, payloadText } = dryRun ? {} : evidenceClaimOf(key, item);
        const earlier = claim && (await store.findIdempotent(ingest.workspaceId, claim, ingest.receivedMs));
        if (earlier) {
          replays += earlier.kind === 'replay' ? 1 : 0;
          results[index] =
            earlier.kind === 'replay' ? accepted(index, earlier.result, true) : rejected(index, keyConflict(`records.${index}.${ITEM_KEY_MEMBER}`, key!));
          return;
        }
        const { write, mappedControls } = checkRecord(item, `records.${index}`, ingest, payloadText);
        if (dryRun) {
          results[index] = accepted(index, { record_id: NIL_UUID, record_type: write.row.record_type, mapped_controls: mappedControls }, false);
          return;
        }
        write.row.record_id = store.newId('rec');
        if (claim) write.claim = claim;
        writes.push(write);
        positions.push(index);
        keys.push(key);
      } catch (error) {
        results[index] = rejected(index, error);
      }
    };
    // Chunk by chunk, each in a turn of the event loop of its own (inTurns), so other tenants'
    // requests are answered between two chunks, not after the whole batch.
    await inTurns(request, records.length, async (from, to) => {
      for (let index = from; index < to; index += 1) await checkItem(index);
    });
    const outcomes = writes.length > 0 ? await store.recordEvidenceBatch(writes) : [];
    outcomes.forEach(({ hit, leafIndex }, i) => {
      const index = positions[i];
      const { row, controls } = writes[i];
      if (hit === null) {
        results[index] = accepted(index, evidenceResult(row, controls, leafIndex), false);
      } else if (hit.kind === 'replay') {
        replays++;
        results[index] = accepted(index, hit.result, true);
      } else results[index] = rejected(index, keyConflict(`records.${index}.${ITEM_KEY_MEMBER}`, keys[i]!));
    });
    const acceptedCount = records.length - results.filter((result) => result.status === 'rejected').length;
    return { accepted: acceptedCount, rejected: records.length - acceptedCount, replayed: replays, results };
  });

  // Extension: every stored record in full, as NDJSON, in the order stored (oldest first), read a
  // page at a time as the reply stream asks for more (backpressure), so memory stays flat.
  app.get(`${WORKSPACE_PREFIX}/grc/evidence/export`, async (request: FastifyRequest, reply: FastifyReply) => {
    const { workspaceId } = authOf(request);
    const query = request.query as Query;
    const systemName = textParam(query, 'system_name');
    const recordType = recordTypeParam(query);
    const sinceMs = timeParam(query, 'since');
    const untilMs = timeParam(query, 'until');
    const limit = integerParam(query, 'limit', Number.MAX_SAFE_INTEGER, 1, Number.MAX_SAFE_INTEGER);
    const afterId = textParam(query, 'after', 64);
    let afterSeq = 0;
    if (afterId !== undefined) {
      const seq = await store.evidence.seqOf(workspaceId, afterId);
      if (seq === undefined) throw invalidField('after', 'is not a record of this workspace (give the record_id of the last line received)');
      afterSeq = seq;
    }
    let remaining = limit;
    const filters = {
      workspaceId,
      ...(systemName !== undefined ? { systemName } : {}),
      ...(recordType !== undefined ? { recordType } : {}),
      ...(sinceMs !== undefined ? { sinceMs } : {}),
      ...(untilMs !== undefined ? { untilMs } : {}),
    };
    const stream = new Readable({
      // One page per read: the next is read only when the reply has taken the last.
      read() {
        const take = Math.min(EXPORT_PAGE, remaining);
        if (take <= 0) {
          this.push(null);
          return;
        }
        store.evidence.exportPage({ ...filters, afterSeq, limit: take }).then(
          (rows) => {
            if (rows.length === 0) {
              this.push(null);
              return;
            }
            let text = '';
            for (const row of rows) text += `${storedRecordJson(row)}\n`;
            afterSeq = rows[rows.length - 1].seq;
            remaining -= rows.length;
            this.push(text);
            if (rows.length < take) this.push(null);
          },
          (error: unknown) => this.destroy(error as Error),
        );
      },
    });
    void reply.type('application/x-ndjson; charset=utf-8');
    return reply.send(stream);
  });

  app.get(`${WORKSPACE_PREFIX}/grc/evidence`, async (request: FastifyRequest) => {
    const { workspaceId } = authOf(request);
    const query = request.query as Query;
    const systemName = textParam(query, 'system_name');
    const recordType = recordTypeParam(query);
    // `since` (an ISO 8601 lower bound) or `days` (a lookback), not both: each alone sets the window.
    const since = timeParam(query, 'since');
    if (since !== undefined && query.days !== undefined) throw invalidField('since', 'and days both set the window; give one of them');
    const days = integerParam(query, 'days', LIST_DEFAULT_DAYS, 1, LIST_MAX_DAYS);
    const sinceMs = since ?? nowMs() - days * DAY_MS;
    const limit = integerParam(query, 'limit', LIST_DEFAULT_LIMIT, 1, LIST_MAX_LIMIT);
    const cursorText = textParam(query, 'cursor', 256);
    const after = cursorText === undefined ? undefined : decodeCursor(cursorText);
    const unknownCursor = () => invalidField('cursor', 'is not a cursor this service issued (use next_cursor from the previous page)');
    if (after === null) throw unknownCursor();

    const page = await store.evidence.list({
      workspaceId,
      sinceMs,
      limit,
      ...(systemName !== undefined ? { systemName } : {}),
      ...(recordType !== undefined ? { recordType } : {}),
      ...(after !== undefined ? { afterRecordId: after.recordId } : {}),
    });
    if (page === null) throw unknownCursor();
    // total: every record the filters and window match, on every page (not only this page's).
    const total = await store.evidence.count({
      workspaceId,
      sinceMs,
      ...(systemName !== undefined ? { systemName } : {}),
      ...(recordType !== undefined ? { recordType } : {}),
    });
    return page.next ? { records: page.records, total, next_cursor: encodeCursor(page.next) } : { records: page.records, total };
  });

  app.get(`${WORKSPACE_PREFIX}/grc/evidence/:record_id`, async (request: FastifyRequest, reply: FastifyReply) => {
    const { workspaceId } = authOf(request);
    const { record_id: recordId } = request.params as { record_id: string };
    const row = await store.evidence.get(workspaceId, recordId);
    if (!row) throw notFound('evidence record not found');
    void reply.type('application/json; charset=utf-8');
    return storedRecordJson(row);
  });
}
