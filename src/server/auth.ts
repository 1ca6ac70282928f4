/**
 * Authentication and the per-workspace rate limit (spec §5, §8; wire.md §5), in one onRequest
 * hook on every endpoint, in this order:
 * 1. `Authorization: Bearer <key>`: missing, malformed, unknown, revoked or expired → 401;
 * 2. a `{workspace_id}` in the path that is not the key's workspace → 404, as for one that does
 *    not exist (a key cannot learn which workspaces exist);
 * 3. the workspace's request budget (2000 a minute by default) → 429 with `Retry-After`.
 * The body is read only after all three pass, so a stranger can neither drain a workspace's
 * budget nor make the service parse anything. A second `Authorization` header is a 400: which of
 * two credentials a request carries must never depend on which one a proxy or parser keeps.
 *
 * The workspace's record budget (limits.ts) is charged by the routes that write records, once they
 * know how many a request holds: {@link chargeRecords}.
 *
 * The hook is a callback hook, not an async one, and the limit is a plain counter per workspace
 * (docs/decisions.md, "Rate limit: our own fixed-window counter in the auth hook"): the hook runs
 * on every request, and a promise or a plugin's generic machinery there costs more than the count.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { badRequest, HttpError, notFound, unauthorized } from './errors.js';
import type { TurnTaker } from './limits.js';
import type { AuthContext, Store } from './store/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** set by the auth hook on every endpoint */
    auth: AuthContext | null;
    /** set by the auth hook: where {@link chargeRecords} charges */
    recordBudget: RecordBudget | null;
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
  /** records charged in the window */
  records: number;
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
    const window = this.#windowAt(key, nowMs);
    window.count += 1;
    const count = window.count;
    return {
      exceeded: count > this.max,
      remaining: count >= this.max ? 0 : this.max - count,
      resetSeconds: Math.ceil((this.windowMs - (nowMs - window.startMs)) / 1000),
    };
  }

  /**
   * Charges `n` records to `key`'s current window (started by the request that carries them).
   * A charge that would go over `maxRecords` is refused whole and charges nothing, so a client
   * that splits its batch can still spend what is left.
   */
  chargeRecords(key: string, n: number, maxRecords: number, nowMs: number): LimitState {
    // When the window of the request that carries these records has just ended, they start the next.
    const window = this.#windowAt(key, nowMs);
    const resetSeconds = Math.ceil((this.windowMs - (nowMs - window.startMs)) / 1000);
    if (window.records + n > maxRecords) return { exceeded: true, remaining: Math.max(0, maxRecords - window.records), resetSeconds };
    window.records += n;
    return { exceeded: false, remaining: maxRecords - window.records, resetSeconds };
  }

  /** `key`'s window at `nowMs`: its current one, or a new one when it has none or its last has ended. */
  #windowAt(key: string, nowMs: number): Window {
    let window = this.#windows.get(key);
    if (window === undefined) {
      if (this.#windows.size >= PRUNE_AT) this.#prune(nowMs);
      window = { startMs: nowMs, count: 0, records: 0 };
      this.#windows.set(key, window);
    } else if (window.startMs + this.windowMs <= nowMs) {
      window.startMs = nowMs;
      window.count = 0;
      window.records = 0;
    }
    return window;
  }

  #prune(nowMs: number): void {
    for (const [key, window] of this.#windows) if (window.startMs + this.windowMs <= nowMs) this.#windows.delete(key);
  }
}

/**
 * Waits for a turn of the event loop of its own (limits.ts, TurnTaker), for a route that splits a
 * long piece of work (a batch's validation and signature checks) into chunks: other clients'
 * requests are served between two chunks.
 *
 * @example
 * for (const chunk of chunks) { await takeTurn(request); work(chunk); }
 */
export function takeTurn(request: FastifyRequest): Promise<void> {
  return request.recordBudget?.turns.take() ?? Promise.resolve();
}

/**
 * Items of a batch checked in one turn (docs/decisions.md, "Security: abusive clients"): 100
 * attestations (validation, canonical JSON, signature checks) hold the event loop for about 5–10 ms
 * on this machine, so a request of another tenant waits at most about that long for a batch, while
 * a batch of 1000 takes ten turns, whose cost is lost in the noise of its throughput.
 */
export const BATCH_TURN_ITEMS = 100;

/**
 * Runs `work` over a batch of `length` items in chunks of BATCH_TURN_ITEMS, in order, each chunk
 * after the first in a turn of its own (takeTurn), so other clients' requests are served between
 * two chunks. The first chunk runs at once: chargeRecords has just taken a turn for a large batch.
 *
 * @example
 * await inTurns(request, records.length, (from, to) => { for (let i = from; i < to; i++) check(records[i]); });
 */
export async function inTurns(request: FastifyRequest, length: number, work: (from: number, to: number) => void): Promise<void> {
  for (let from = 0; from < length; from += BATCH_TURN_ITEMS) {
    if (from > 0) await takeTurn(request);
    work(from, Math.min(length, from + BATCH_TURN_ITEMS));
  }
}

/** Whether the raw header list names Authorization more than once (Node keeps only the first). */
function hasSecondAuthorization(rawHeaders: readonly string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

export interface AuthOptions {
  store: Store;
  nowMs: () => number;
  /** requests per minute per workspace */
  rateLimitPerMinute: number;
  /** records per minute per workspace */
  recordsPerMinute: number;
  /** the budgets' clock, epoch ms (default Date.now) */
  budgetNowMs?: () => number;
}

/** What a request needs to charge its records: set by the auth hook. */
interface RecordBudget {
  limiter: FixedWindowLimiter;
  maxRecords: number;
  nowMs: () => number;
  turns: TurnTaker;
}

/** Charges of at least this many records wait for a turn of their own (limits.ts, TurnTaker). */
const TURN_AT_RECORDS = 64;

/**
 * Charges `n` records (every item of a batch; 1 for a single-record write) to the workspace's
 * record budget before the route does the work, and answers 429 with `Retry-After` over it.
 * A large charge then waits for a turn of the event loop of its own, so that one client's batches
 * are interleaved with other clients' requests instead of running back to back.
 *
 * @example
 * await chargeRecords(request, records.length);
 * @throws HttpError 429 `rate_limited` over the budget
 */
export function chargeRecords(request: FastifyRequest, n: number): Promise<void> | undefined {
  const budget = request.recordBudget;
  if (budget === null || request.auth === null) return undefined;
  const state = budget.limiter.chargeRecords(request.auth.workspaceId, n, budget.maxRecords, budget.nowMs());
  if (state.exceeded) {
    const retry = String(Math.max(1, state.resetSeconds));
    throw new HttpError(
      429,
      'rate_limited',
      n > budget.maxRecords
        ? `${n} records is more than this workspace's budget of ${budget.maxRecords} records a minute; split the batch`
        : `more than ${budget.maxRecords} records in a minute for this workspace (${state.remaining} left in this minute); retry in ${retry} s`,
      undefined,
      { 'retry-after': retry },
    );
  }
  return n >= TURN_AT_RECORDS ? budget.turns.take() : undefined;
}

/**
 * Decorates requests with `auth` and returns the hook to put on every endpoint.
 * The budgets count in real time (`Date.now()`, or the `budgetNowMs` a test gives), whatever clock
 * the application is given for records.
 */
export function createAuthHook(app: FastifyInstance, options: AuthOptions & { turns: TurnTaker }) {
  app.decorateRequest('auth', null);
  app.decorateRequest('recordBudget', null);
  const limiter = new FixedWindowLimiter(options.rateLimitPerMinute);
  const limitHeader = String(limiter.max);
  const budgetNowMs = options.budgetNowMs ?? Date.now;
  const recordBudget: RecordBudget = { limiter, maxRecords: options.recordsPerMinute, nowMs: budgetNowMs, turns: options.turns };

  /** The checks; throws the HttpError to answer with. */
  function check(request: FastifyRequest, reply: FastifyReply): void {
    const header = request.headers.authorization;
    if (header === undefined || header === '') throw unauthorized('the Authorization header is missing; send Authorization: Bearer <API key>');
    const match = header.length <= MAX_KEY_LENGTH + 16 ? BEARER.exec(header) : null;
    if (!match) throw unauthorized('the Authorization header must be Bearer followed by the API key');
    if (hasSecondAuthorization(request.raw.rawHeaders)) throw badRequest('the request has more than one Authorization header; send exactly one');
    const auth = options.store.identity.authenticate(match[1]!, options.nowMs());
    if (!auth) throw unauthorized('the API key is not valid: unknown, revoked or expired');

    const { workspace_id: workspaceId } = request.params as { workspace_id?: string };
    if (workspaceId !== undefined && workspaceId !== auth.workspaceId) throw notFound('workspace not found');
    request.auth = auth;
    request.recordBudget = recordBudget;

    const limit = limiter.hit(auth.workspaceId, budgetNowMs());
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
