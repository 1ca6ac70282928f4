/**
 * Signed gate verdicts (docs/service.md "Gate verdicts", docs/ci.md), under the workspace prefix:
 * - POST grc/gates/check with `{subjects, system?}`: the gates evaluated now, answered as GET
 *   grc/gates/check answers, plus `verdict_id`, `exit_code`, `ledger_index` and `envelope`, a DSSE
 *   envelope of the in-toto statement (core/verdicts.ts) signed with the verdict key. Every verdict
 *   is stored and appended to the workspace's log (leaf kind `verdict`), failing ones too;
 * - GET gates/verdict-key: the verdict key's public half (hex, PEM, key id);
 * - GET gates/verdicts[?limit=&before=] and gates/verdicts/{verdict_id}: the verdicts, newest first,
 *   each exactly the record its leaf commits to.
 * GET grc/gates/check is unchanged (posture.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  canonicalize,
  gatesExitCode,
  IN_TOTO_PAYLOAD_TYPE,
  parseCheckpoint,
  parseNote,
  scoresFrom,
  signDsse,
  subjectIssues,
  verdictStatement,
  type VerdictCheckpoint,
  type VerdictGate,
  type VerdictSubject,
} from '../../core/index.js';
import type { SigningKey } from '../../core/signing/keys.js';
import { authOf } from '../auth.js';
import { HttpError, invalidField, notFound, validationFailed } from '../errors.js';
import { newId } from '../ids.js';
import { bodyObject } from '../json-body.js';
import { integerParam, textParam, type Query } from '../query.js';
import { LedgerQueryError } from '../store/ledger-common.js';
import type { Store } from '../store/store.js';
import { verdictPublicKey } from '../verdict-key.js';
import { WORKSPACE_PREFIX, type RouteDeps } from './deps.js';
import { gatesCheckBody, gateStanding } from './posture.js';

const MAX_SYSTEM = 256;
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;
const JSON_TYPE = 'application/json; charset=utf-8';

function noVerdictKey(): HttpError {
  return new HttpError(503, 'service_unavailable', 'this service has no verdict key: gate verdicts are not signed (see docs/ci.md)', undefined, {
    'retry-after': '3600',
  });
}

/** The workspace log's latest signed checkpoint, or null when the log signs none (no log key). */
async function currentCheckpoint(store: Store, workspaceId: string): Promise<VerdictCheckpoint | null> {
  let note: string;
  try {
    note = await store.ledger.checkpoint(workspaceId);
  } catch (error) {
    if (error instanceof LedgerQueryError && error.code === 'no_key') return null;
    throw error;
  }
  const { origin, size, rootHash } = parseCheckpoint(parseNote(note).text);
  return { origin, tree_size: size, root_hash: rootHash.toString('base64'), note };
}

export interface VerdictRouteOptions {
  /** the key that signs verdicts; null: none (signing answers 503) */
  key: SigningKey | null;
  /** integrate pending leaves before the checkpoint is read (the embedded store, which runs no timer) */
  integrateOnRead: boolean;
}

export function registerVerdictRoutes(app: FastifyInstance, { store, nowMs }: RouteDeps, options: VerdictRouteOptions): void {
  const { key } = options;

  // One record charged (auth.ts, recordsPerRequest): every verdict is a leaf of the log.
  app.post(`${WORKSPACE_PREFIX}/grc/gates/check`, { config: { recordsPerRequest: 1 } }, async (request: FastifyRequest) => {
    const { workspaceId } = authOf(request);
    const body = bodyObject(request);
    const issues = subjectIssues(body.subjects);
    const system = body.system ?? null;
    if (system !== null && (typeof system !== 'string' || system.length === 0 || system.length > MAX_SYSTEM)) {
      issues.push({ path: 'system', code: 'type', message: `must be the AI system's name, 1 to ${MAX_SYSTEM} characters` });
    }
    if (issues.length > 0) throw validationFailed(issues);
    if (key === null) throw noVerdictKey();
    const subjects = body.subjects as unknown as VerdictSubject[];

    if (options.integrateOnRead) await store.ledger.integrate();
    const issuedMs = nowMs();
    const [checkpoint, { byFramework, policy }] = await Promise.all([currentCheckpoint(store, workspaceId), gateStanding(store, workspaceId, issuedMs)]);
    const answer = gatesCheckBody(byFramework, policy);
    const exitCode = gatesExitCode(answer.gates);
    const gates: VerdictGate[] = answer.gates.map((gate, index) => {
      const status = answer.results[index];
      return {
        gate_id: gate.gate_id,
        framework: status.framework,
        name: gate.name,
        mode: status.mode,
        threshold_pct: status.threshold_pct,
        current_pct: status.current_pct,
        passing: gate.passing,
        blocking: gate.blocking,
        exit_code: gate.exit_code,
        ...(gate.reason !== undefined ? { reason: gate.reason } : {}),
      };
    });
    const verdictId = newId('vrd');
    const issuedAt = new Date(issuedMs).toISOString();
    const statement = verdictStatement({
      verdictId,
      workspaceId,
      system: system as string | null,
      time: issuedAt,
      subjects: subjects.map((s) => ({ name: s.name, digest: { sha256: s.digest.sha256 } })),
      gates,
      exitCode,
      posture: {
        overall_pct: scoresFrom(byFramework).overall_pct,
        frameworks: byFramework.map((entry) => ({
          framework: entry.framework,
          score_pct: entry.score_pct,
          controls_required: entry.required,
          controls_covered: entry.covered,
        })),
      },
      policy,
      checkpoint,
      verifierId: `https://${store.ledger.origin(workspaceId)}`,
    });
    const envelope = signDsse(IN_TOTO_PAYLOAD_TYPE, Buffer.from(canonicalize(statement), 'utf8'), key);
    const record = {
      verdict_id: verdictId,
      workspace_id: workspaceId,
      issued_at: issuedAt,
      exit_code: exitCode,
      subjects: statement.subject,
      envelope,
    };
    const recordText = canonicalize(record);
    const ledgerIndex = await store.verdicts.record({
      verdict_id: verdictId,
      workspace_id: workspaceId,
      issued_ms: issuedMs,
      exit_code: exitCode,
      record: recordText,
    });
    return { ...answer, verdict_id: verdictId, exit_code: exitCode, ledger_index: ledgerIndex, envelope };
  });

  app.get(`${WORKSPACE_PREFIX}/gates/verdict-key`, async () => {
    if (key === null) throw noVerdictKey();
    return verdictPublicKey(key);
  });

  app.get(`${WORKSPACE_PREFIX}/gates/verdicts`, async (request: FastifyRequest, reply: FastifyReply) => {
    const { workspaceId } = authOf(request);
    const query = request.query as Query;
    const limit = integerParam(query, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT);
    const before = textParam(query, 'before', 128);
    const rows = await store.verdicts.list({ workspaceId, limit, ...(before !== undefined && before !== '' ? { beforeId: before } : {}) });
    // Each verdict exactly as stored: the bytes its leaf commits to.
    const next = rows.length === limit ? JSON.stringify(rows[rows.length - 1].verdict_id) : 'null';
    void reply.type(JSON_TYPE);
    return `{"verdicts":[${rows.map((row) => row.record).join(',')}],"next_before":${next}}`;
  });

  app.get(`${WORKSPACE_PREFIX}/gates/verdicts/:verdict_id`, async (request: FastifyRequest, reply: FastifyReply) => {
    const { workspaceId } = authOf(request);
    const id = (request.params as { verdict_id: string }).verdict_id;
    if (id.length > 128) throw invalidField('verdict_id', 'is at most 128 characters');
    const row = await store.verdicts.get(workspaceId, id);
    if (row === undefined) throw notFound('no verdict with this id in the workspace');
    void reply.type(JSON_TYPE);
    return row.record;
  });
}
