/**
 * Authentication and the per-workspace rate limit (spec §5, §8; wire.md §5), in one onRequest
 * hook on every endpoint, in this order:
 * 1. `Authorization: Bearer <key>`: missing, malformed, unknown, revoked or expired → 401;
 * 2. a `{workspace_id}` in the path that is not the key's workspace → 404, as for one that does
 *    not exist (a key cannot learn which workspaces exist);
 * 3. the workspace's request budget (2000 a minute by default) → 429 with `Retry-After`.
 * The body is read only after all three pass, so a stranger can neither drain a workspace's
 * budget nor make the service parse anything.
 *
 * The hook is a callback hook, not an async one, and the limit is a plain counter per workspace
 * (docs/decisions.md, "Rate limit: our own fixed-window counter in the auth hook"): the hook runs
 * on every request, and a promise or a plugin's generic machinery there costs more than the count.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
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

/** The rate limit's window: one minute (spec §8, "per minute"). */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/** What one counted request learns from {@link FixedWindowLimiter.hit}. */
export interface LimitState {
  /** the request is over the budget: answer 429 */
  exceeded: boolean;
  /** requests left in the window (0 once exceeded) */
  remaining: number;
  /** whole seconds until the window ends (rounded up) */
  resetSeconds: number;
}

interface Window {
  startMs: number;
  count: number;
}

/** Past this many workspaces with a window, ended windows are dropped before a new one is added. */
const PRUNE_AT = 10_000;

/**
 * Fixed windows per key (the workspace): a window starts with the key's first request and lasts
 * {@link RATE_LIMIT_WINDOW_MS}; the request after it starts a new one. The same rule
 * `@fastify/rate-limit`'s local store applied, kept in a Map; memory is bounded by the workspaces
 * seen within a minute, since ended windows are dropped once there are many.
 */
export class FixedWindowLimiter {
  readonly #windows = new Map<string, Window>();

  constructor(
    /** requests allowed per window */
    readonly max: number,
    readonly windowMs: number = RATE_LIMIT_WINDOW_MS,
  ) {}

  /** Counts one request for `key` at `nowMs`. */
  hit(key: string, nowMs: number): LimitState {
    let window = this.#windows.get(key);
    if (window === undefined) {
      if (this.#windows.size >= PRUNE_AT) this.#prune(nowMs);
      window = { startMs: nowMs, count: 0 };
      this.#windows.set(key, window);
    } else if (window.startMs + this.windowMs <= nowMs) {
      window.startMs = nowMs;
      window.count = 0;
    }
    window.count += 1;
    const count = window.count;
    return {
      exceeded: count > this.max,
      remaining: count >= this.max ? 0 : this.max - count,
      resetSeconds: Math.ceil((this.windowMs - (nowMs - window.startMs)) / 1000),
    };
  }

  #prune(nowMs: number): void {
    for (const [key, window] of this.#windows) if (window.startMs + this.windowMs <= nowMs) this.#windows.delete(key);
  }
}

export interface AuthOptions {
  store: Store;
  nowMs: () => number;
  /** requests per minute per workspace */
  rateLimitPerMinute: number;
}

/**
 * Decorates requests with `auth` and returns the hook to put on every endpoint.
 * The limiter counts in real time (`Date.now()`), whatever clock the application is given.
 */
export function createAuthHook(app: FastifyInstance, options: AuthOptions) {
  app.decorateRequest('auth', null);
  const limiter = new FixedWindowLimiter(options.rateLimitPerMinute);
  const limitHeader = String(limiter.max);

  /** The checks; throws the HttpError to answer with. */
  function check(request: FastifyRequest, reply: FastifyReply): void {
    const header = request.headers.authorization;
    if (header === undefined || header === '') throw unauthorized('the Authorization header is missing; send Authorization: Bearer <API key>');
    const match = header.length <= MAX_KEY_LENGTH + 16 ? BEARER.exec(header) : null;
    if (!match) throw unauthorized('the Authorization header must be Bearer followed by the API key');
    const auth = options.store.identity.authenticate(match[1]!, options.nowMs());
    if (!auth) throw unauthorized('the API key is not valid: unknown, revoked or expired');

    const { workspace_id: workspaceId } = request.params as { workspace_id?: string };
    if (workspaceId !== undefined && workspaceId !== auth.workspaceId) throw notFound('workspace not found');
    request.auth = auth;

    const limit = limiter.hit(auth.workspaceId, Date.now());
    void reply
      .header('x-ratelimit-limit', limitHeader)
      .header('x-ratelimit-remaining', String(limit.remaining))
      .header('x-ratelimit-reset', String(limit.resetSeconds));
    if (limit.exceeded) {
      throw new HttpError(
        429,
        'rate_limited',
        `more than ${limiter.max} requests in a minute for this workspace; retry in ${limit.resetSeconds} s`,
        undefined,
        { 'retry-after': String(Math.max(1, limit.resetSeconds)) },
      );
    }
  }

  return function authenticate(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    try {
      check(request, reply);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  };
}
