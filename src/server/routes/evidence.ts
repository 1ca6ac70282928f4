/**
 * GRC evidence (spec §4.2, §4.3) and the single-record extension:
 * - POST grc/evidence[?dry_run=true] stores one record (append-only; nothing updates or deletes);
 * - GET grc/evidence lists records, newest first, with an opaque `next_cursor` (extension);
 * - GET grc/evidence/{record_id} returns one whole stored record (extension), its payload spliced
 *   in as the stored canonical text so that `client_sig` verifies on what an auditor fetches.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { canonicalize, controlsEarned, DAY_MS, isRecordType, RECORD_TYPES, validateRecord, type JsonValue } from '../../core/index.js';
import { authOf, chargeRecords } from '../auth.js';
import { invalidField, notFound, validationFailed } from '../errors.js';
import { NIL_UUID, newId } from '../ids.js';
import { bodyObject } from '../json-body.js';
import { booleanParam, integerParam, textParam, type Query } from '../query.js';
import type { EvidenceRow, ListPosition } from '../store/index.js';
import { evidenceView } from '../store/record-views.js';
import { isoFromMs, sourceOf, wellFormedIssues, WORKSPACE_PREFIX, type RouteDeps } from './deps.js';

/** Evidence list defaults and limits (spec §4.3, §8). */
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

export function registerEvidenceRoutes(app: FastifyInstance, { store, nowMs }: RouteDeps): void {
  app.post(`${WORKSPACE_PREFIX}/grc/evidence`, async (request: FastifyRequest, reply: FastifyReply) => {
    const { workspaceId } = authOf(request);
    const dryRun = booleanParam(request.query as Query, 'dry_run');
    const record = bodyObject(request);
    await chargeRecords(request, 1);
    const issues = [...validateRecord(record), ...wellFormedIssues(record, ['system_name', 'identity', 'resource'])];
    if (issues.length > 0) throw validationFailed(issues);

    const recordType = record.record_type as string;
    let payloadText: string;
    try {
      payloadText = canonicalize(record.payload);
    } catch (error) {
      throw invalidField('payload', `cannot be written as canonical JSON: ${(error as Error).message}`);
    }
    const mappedControls = controlsEarned(recordType, record.payload);
    if (dryRun) return { record_id: NIL_UUID, record_type: recordType, mapped_controls: mappedControls, detail: 'dry_run' };

    const receivedMs = nowMs();
    const receivedAt = isoFromMs(receivedMs);
    // occurred_at defaults to the time of ingest (spec §2.2); as sent otherwise, since client_sig covers it.
    const occurredAt = optionalText(record.occurred_at) ?? receivedAt;
    const row: EvidenceRow = {
      record_id: newId('rec'),
      workspace_id: workspaceId,
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
      source: sourceOf(request),
      mapped_controls: JSON.stringify(mappedControls),
      received_at: receivedAt,
      received_ms: receivedMs,
    };
    const payload = record.payload as Record<string, JsonValue>;
    const riskTier = recordType === 'ai_risk_assessment' && typeof payload.risk_level === 'string' ? payload.risk_level : undefined;
    const ledgerIndex = await store.recordEvidence({ row, controls: mappedControls, ...(riskTier !== undefined ? { riskTier } : {}) });
    void reply.code(201);
    return { record_id: row.record_id, record_type: recordType, mapped_controls: mappedControls, detail: 'ok', ledger_index: ledgerIndex };
  });

  app.get(`${WORKSPACE_PREFIX}/grc/evidence`, async (request: FastifyRequest) => {
    const { workspaceId } = authOf(request);
    const query = request.query as Query;
    const systemName = textParam(query, 'system_name');
    const recordType = textParam(query, 'record_type');
    if (recordType !== undefined && !isRecordType(recordType)) throw invalidField('record_type', `must be one of: ${RECORD_TYPES.join(', ')}`);
    const days = integerParam(query, 'days', LIST_DEFAULT_DAYS, 1, LIST_MAX_DAYS);
    const limit = integerParam(query, 'limit', LIST_DEFAULT_LIMIT, 1, LIST_MAX_LIMIT);
    const cursorText = textParam(query, 'cursor', 256);
    const after = cursorText === undefined ? undefined : decodeCursor(cursorText);
    const unknownCursor = () => invalidField('cursor', 'is not a cursor this service issued (use next_cursor from the previous page)');
    if (after === null) throw unknownCursor();

    const page = store.evidence.list({
      workspaceId,
      sinceMs: nowMs() - days * DAY_MS,
      limit,
      ...(systemName !== undefined ? { systemName } : {}),
      ...(recordType !== undefined ? { recordType } : {}),
      ...(after !== undefined ? { afterRecordId: after.recordId } : {}),
    });
    if (page === null) throw unknownCursor();
    return page.next ? { records: page.records, next_cursor: encodeCursor(page.next) } : { records: page.records };
  });

  app.get(`${WORKSPACE_PREFIX}/grc/evidence/:record_id`, async (request: FastifyRequest, reply: FastifyReply) => {
    const { workspaceId } = authOf(request);
    const { record_id: recordId } = request.params as { record_id: string };
    const row = store.evidence.get(workspaceId, recordId);
    if (!row) throw notFound('evidence record not found');
    void reply.type('application/json; charset=utf-8');
    return storedRecordJson(row);
  });
}
