/** Shared pieces of the service tests: HTTP calls, valid records of every type, stored rows. */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Database } from '../../src/server/store/sqlite/driver.js';
import { request } from 'undici';
import type { RecordType } from '../../src/core/index.js';
import type { AttestationRow, EvidenceRow } from '../../src/server/store/rows.js';
import { findBinDir } from './postgres-cluster.mjs';
import type { TestServer } from './server.js';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** the body parsed with JSON.parse (undefined when it is not JSON) */
  json: any;
}

export interface CallOptions {
  /** an object is sent as JSON; a string is sent as it is */
  body?: unknown;
  /** default: the server's own key; null sends no Authorization header */
  apiKey?: string | null;
  headers?: Record<string, string>;
}

/** One request to the test server. */
export async function call(server: Pick<TestServer, 'url' | 'apiKey'>, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  const apiKey = options.apiKey === undefined ? server.apiKey : options.apiKey;
  if (apiKey !== null) headers.authorization = `Bearer ${apiKey}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  // undici's request, not fetch: the same HTTP/1.1 on a kept-alive connection at half the CPU a
  // request (fetch's WHATWG layers cost more than the service's own work on small requests, and
  // the suite sends thousands). No redirects or content decoding: the service sends neither.
  const response = await request(server.url + path, { method: method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const replyHeaders = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (Array.isArray(value)) for (const item of value) replyHeaders.append(name, item);
    else if (value !== undefined) replyHeaders.set(name, value);
  }
  return { status: response.statusCode, headers: replyHeaders, text, json };
}

/** `/api/workspaces/<ws>/governance/<rest>` */
export function wsPath(workspaceId: string, rest: string): string {
  return `/api/workspaces/${workspaceId}/governance/${rest}`;
}

/** A payload that passes validation, per record type. */
export const PAYLOADS: Record<RecordType, Record<string, unknown>> = {
  ai_risk_assessment: {
    risk_level: 'limited',
    risk_summary: 'Answers customer questions',
    intended_purpose: 'Customer support',
    impact_domains: ['customer_service'],
    art5_self_assessment: true,
  },
  governance_review: { reviewed_by: 'board@example.com', report_type: 'quarterly', frameworks_reviewed: ['eu_ai_act'], overall_readiness: 72, action_items: 3 },
  model_evaluation: { model_id: 'm-1', dataset: 'holdout', accuracy: 0.91, evaluated_by: 'ml@example.com', evaluation_type: 'quarterly' },
  training_data_governance: {
    model_id: 'm-1',
    dataset_id: 'd-1',
    record_count: 1000,
    bias_checks_performed: true,
    approved_by: 'dpo@example.com',
    data_sources: ['crm'],
    data_categories: ['contact'],
  },
  human_oversight: { decision_id: 'dec-1', ai_recommendation: 'approve', human_decision: 'deny', reviewer: 'rev@example.com', override: true },
  incident_report: { title: 'Outage', severity: 'low', description: 'Model timed out', affected_systems: ['chatbot'] },
  change_event: { type: 'deployment', by: 'ci@example.com', description: 'v2', environment: 'production', system: 'chatbot' },
  access_review: { user: 'a@example.com', resource: 'db', granted: true, reviewed_by: 'sec@example.com', review_type: 'periodic' },
  vendor_risk: { vendor: 'Acme', tier: 'low', last_reviewed: '2026-01-01', findings: 0 },
  model_drift_event: { model_id: 'm-1', metric: 'auc', baseline: 0.9, current: 0.8, threshold: 0.05, drift_type: 'performance', detected_by: 'monitor' },
  policy_acknowledged: { decision: 'acknowledged', policy_name: 'AI use', policy_version: '1', acknowledgment_type: 'initial', channel: 'in-app' },
};

/** A valid evidence record of a type; `overrides` replace top-level members. */
export function evidenceRecord(type: RecordType = 'change_event', overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { record_type: type, system_name: 'chatbot', payload: PAYLOADS[type], occurred_at: new Date().toISOString(), ...overrides };
}

/** A valid unsigned attestation. */
export function attestation(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    system_name: 'chatbot',
    agent_name: 'chatbot',
    tool_name: 'search',
    input_hash: 'a'.repeat(64),
    output_hash: 'b'.repeat(64),
    schema_version: 2,
    executed_at: new Date().toISOString(),
    ...overrides,
  };
}

/** Runs `task` over `items` with at most `concurrency` at a time. */
export async function pool<T, R>(items: readonly T[], concurrency: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index], index);
    }
  });
  await Promise.all(workers);
  return results;
}

/**
 * Rows of a table for one workspace, read straight from the database: the SQLite file, or (a
 * postgres:// URL, helpers/postgres.ts) through psql, so that the count stays synchronous.
 */
export function countRows(dbPath: string, table: string, workspaceId: string): number {
  if (/^postgres(ql)?:\/\//.test(dbPath)) return countPostgresRows(dbPath, table, workspaceId);
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table} WHERE workspace_id = ?`).get(workspaceId) as { n: number }).n;
  } finally {
    db.close();
  }
}

function countPostgresRows(url: string, table: string, workspaceId: string): number {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`not a table name: ${table}`);
  // on stdin, where psql quotes the variable (:'ws'); -c would not interpolate it
  // the psql beside the server binaries the test cluster runs (helpers/postgres-cluster.mjs)
  const out = execFileSync(join(findBinDir(), 'psql'), ['-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-v', `ws=${workspaceId}`, '-d', url], {
    encoding: 'utf8',
    input: `SELECT count(*) FROM ${table} WHERE workspace_id = :'ws';\n`,
  });
  return Number(out.trim());
}

/** A stored evidence row for store-level tests: the members that matter, the rest empty. */
export function storedEvidenceRow(fields: {
  workspaceId: string;
  recordId: string;
  occurredMs: number;
  receivedMs?: number;
  system?: string;
  type?: string;
}): EvidenceRow {
  const receivedMs = fields.receivedMs ?? fields.occurredMs + 1000;
  return {
    record_id: fields.recordId,
    workspace_id: fields.workspaceId,
    record_type: fields.type ?? 'change_event',
    system_name: fields.system ?? 'sys-a',
    identity: null,
    resource: null,
    environment: null,
    occurred_at: new Date(fields.occurredMs).toISOString(),
    occurred_ms: fields.occurredMs,
    payload: '{}',
    client_sig: null,
    client_sig_algo: null,
    source: 'sdk',
    mapped_controls: '[]',
    received_at: new Date(receivedMs).toISOString(),
    received_ms: receivedMs,
  };
}

/**
 * A stored attestation row for store-level tests: a declared attestation received a second after
 * it ran, `fields` over it (the ISO times follow executed_ms and received_ms unless given).
 */
export function storedAttestationRow(fields: Partial<AttestationRow> & Pick<AttestationRow, 'attestation_id' | 'workspace_id'>): AttestationRow {
  const executedMs = fields.executed_ms ?? Date.UTC(2026, 0, 1);
  const receivedMs = fields.received_ms ?? executedMs + 1000;
  return {
    system_name: 'sys-a',
    agent_name: 'agent',
    tool_name: 'tool',
    input_hash: 'a'.repeat(64),
    output_hash: 'b'.repeat(64),
    executed_at: new Date(executedMs).toISOString(),
    executed_ms: executedMs,
    record: '{}',
    witness_form: null,
    witness_sig: null,
    signed_ms: null,
    key_fingerprint: null,
    trust_tier: 'declared',
    tier_reason: null,
    source: 'sdk',
    received_at: new Date(receivedMs).toISOString(),
    received_ms: receivedMs,
    ...fields,
  };
}
