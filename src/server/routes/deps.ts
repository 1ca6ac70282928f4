/** What every route module gets from createApp, and small helpers they share. */
import type { FastifyRequest } from 'fastify';
import type { ValidationIssue } from '../../core/index.js';
import type { Store } from '../store/store.js';
import type { VerifyPool } from '../verify-pool.js';

export interface RouteDeps {
  store: Store;
  /** the clock, epoch ms */
  nowMs: () => number;
  /** worker threads for the signatures of attestation batches; null: checked in the request */
  verifyPool: VerifyPool | null;
}

/** The URL prefix of the workspace-scoped endpoints (docs/service.md). */
export const WORKSPACE_PREFIX = '/api/workspaces/:workspace_id/governance';

/**
 * Where a write came from, stored with it as `source` (docs/service.md "POST …/grc/evidence"): the `X-Govctl-Source` header
 * when it is one of these, `sdk` otherwise (docs/service.md).
 */
export const SOURCES = ['sdk', 'cli', 'import', 'agent'] as const;
export type Source = (typeof SOURCES)[number];

export function sourceOf(request: FastifyRequest): Source {
  const header = request.headers['x-govctl-source'];
  const value = typeof header === 'string' ? header.trim().toLowerCase() : '';
  return (SOURCES as readonly string[]).includes(value) ? (value as Source) : 'sdk';
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Strings the service keeps in their own columns (names, identity, resource) must be well-formed
 * Unicode without U+0000, on every backend alike: SQLite stores UTF-8, which cannot hold a lone
 * surrogate; PostgreSQL's text cannot hold U+0000; and the stored value must be exactly what was
 * signed, so neither is altered to fit. Payloads have no such limit: they are stored as canonical
 * JSON, where every non-ASCII character and every control character is an escape.
 */
export function wellFormedIssues(record: Record<string, unknown>, keys: readonly string[], prefix = ''): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const key of keys) {
    const value = record[key];
    if (typeof value !== 'string') continue;
    const path = prefix ? `${prefix}.${key}` : key;
    if (LONE_SURROGATE.test(value)) issues.push({ path, code: 'format', message: 'must be well-formed Unicode (it holds a lone surrogate)' });
    else if (value.includes('\u0000')) issues.push({ path, code: 'format', message: 'must not hold the character U+0000' });
  }
  return issues;
}

/** Epoch ms as the wire writes times: ISO 8601, UTC, milliseconds, `Z`. */
export function isoFromMs(ms: number): string {
  return new Date(ms).toISOString();
}
