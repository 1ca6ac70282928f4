/**
 * Authentication and the per-workspace rate limit (spec §5, §8; wire.md §5), in one onRequest
 * hook on every endpoint, in this order:
 * 1. `Authorization: Bearer <key>`: missing, malformed, unknown, revoked or expired → 401;
 * 2. a `{workspace_id}` in the path that is not the key's workspace → 404, as for one that does
 *    not exist (a key cannot learn which workspaces exist);
 * 3. the workspace's request budget (2000 a minute by default) → 429 with `Retry-After`.
 * The body is read only after all three pass, so a stranger can neither drain a workspace's
 * budget nor make the service parse anything.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, notFound, unauthorized } from './errors.js';
import type { AuthContext, Store } from './store/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** set by the auth hook on every endpoint */
    auth: AuthContext | null;
  }
}

/** The authenticated identity of a request that reached a handler. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new Error('handler reached without authentication');
  return request.auth;
}

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

/** Longest credential looked at; real keys are 46 characters. */
const MAX_KEY_LENGTH = 512;

export interface AuthOptions {
  store: Store;
  nowMs: () => number;
  /** requests per minute per workspace */
  rateLimitPerMinute: number;
}

/**
 * Decorates requests with `auth` and returns the hook to put on every endpoint.
 * Needs `@fastify/rate-limit` registered on `app` (for `createRateLimit`).
 */
export function createAuthHook(app: FastifyInstance, options: AuthOptions) {
  app.decorateRequest('auth', null);
  const checkLimit = app.createRateLimit({
    max: options.rateLimitPerMinute,
    timeWindow: 60_000,
    keyGenerator: (request) => authOf(request).workspaceId,
  });

  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    if (header === undefined || header === '') throw unauthorized('the Authorization header is missing; send Authorization: Bearer <API key>');
    const match = header.length <= MAX_KEY_LENGTH + 16 ? BEARER.exec(header) : null;
    if (!match) throw unauthorized('the Authorization header must be Bearer followed by the API key');
    const auth = options.store.identity.authenticate(match[1]!, options.nowMs());
    if (!auth) throw unauthorized('the API key is not valid: unknown, revoked or expired');

    const { workspace_id: workspaceId } = request.params as { workspace_id?: string };
    if (workspaceId !== undefined && workspaceId !== auth.workspaceId) throw notFound('workspace not found');
    request.auth = auth;

    const limit = await checkLimit(request);
    if (limit.isAllowed) return;
    void reply.headers({
      'x-ratelimit-limit': String(limit.max),
      'x-ratelimit-remaining': String(limit.remaining),
      'x-ratelimit-reset': String(limit.ttlInSeconds),
    });
    if (limit.isExceeded) {
      throw new HttpError(
        429,
        'rate_limited',
        `more than ${limit.max} requests in a minute for this workspace; retry in ${limit.ttlInSeconds} s`,
        undefined,
        { 'retry-after': String(Math.max(1, limit.ttlInSeconds)) },
      );
    }
  };
}
