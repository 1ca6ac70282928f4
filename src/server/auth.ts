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
 * The workspace's record budget (limits.ts) is charged with the request when its route carries a
 * fixed number of records (route config `recordsPerRequest`: the single-record writes), else by the
 * route once it knows how many a request holds: {@link chargeRecords}.
 *
 * The key check and the counts are the store's (store.admit, store.budget; for SQLite a
 * plain counter per workspace in memory, store/memory-budget.ts, docs/decisions.md "Rate limit:
 * our own fixed-window counter"). The hook is a callback hook that settles on the store's promises,
 * not an async one through a plugin's generic machinery.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { badRequest, forbidden, HttpError, notFound, unauthorized } from './errors.js';
import type { TurnTaker } from './limits.js';
import type { ApiKeyRole, AuthContext } from './store/rows.js';
import type { BudgetState, Store } from './store/store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** set by the auth hook on every endpoint */
    auth: AuthContext | null;
    /** set by the auth hook: where {@link chargeRecords} charges */
    recordBudget: RecordBudget | null;
  }
  interface FastifyContextConfig {
    /**
     * The records every request of this route carries (1 for a single-record write), charged by
     * the auth hook with the request itself: one step of the store (Store.admit) instead of two.
     * A route whose requests carry a number known only from the body calls {@link chargeRecords}.
     */
    recordsPerRequest?: number;
    /**
     * What a route does, which decides the key roles it admits ({@link routeAccess}): by default a
     * GET or HEAD reads and any other method writes; a route that stores nothing whatever its
     * method says `read`, and one that changes the gate policy says `admin`.
     */
    access?: RouteAccess;
  }
}

/** What a route does: reads, writes records, or changes the gate policy. */
export type RouteAccess = 'read' | 'write' | 'admin';

/** The access of a route: its `access` config, else `read` for GET and HEAD and `write` for the rest. */
export function routeAccess(method: string, config: { access?: RouteAccess }): RouteAccess {
  return config.access ?? (method === 'GET' || method === 'HEAD' ? 'read' : 'write');
}

/** The roles each access admits (docs/security.md, "API key roles"). */
const ADMITS: Readonly<Record<RouteAccess, readonly ApiKeyRole[]>> = {
  read: ['reader', 'writer', 'admin'],
  write: ['writer', 'admin'],
  admin: ['admin'],
};

/** Whether a key of `role` may make a request of `access`. */
export function roleAdmits(role: ApiKeyRole, access: RouteAccess): boolean {
  return ADMITS[access].includes(role);
}

/** The authenticated identity of a request that reached a handler. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new Error('handler reached without authentication');
  return request.auth;
}

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

/** Longest credential looked at; real keys are 46 characters. */
const MAX_KEY_LENGTH = 512;

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
export async function inTurns(request: FastifyRequest, length: number, work: (from: number, to: number) => void | Promise<void>): Promise<void> {
  for (let from = 0; from < length; from += BATCH_TURN_ITEMS) {
    if (from > 0) await takeTurn(request);
    await work(from, Math.min(length, from + BATCH_TURN_ITEMS));
  }
}

/** Whether the raw header list names Authorization more than once (Node keeps only the first). */
function hasSecondAuthorization(rawHeaders: readonly string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
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
  budget: Store['budget'];
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
export async function chargeRecords(request: FastifyRequest, n: number): Promise<void> {
  const budget = request.recordBudget;
  if (budget === null || request.auth === null) return;
  const state = await budget.budget.chargeRecords(request.auth.workspaceId, n, budget.maxRecords, budget.nowMs());
  if (state.exceeded) throw recordsRefused(n, budget.maxRecords, state);
  if (n >= TURN_AT_RECORDS) await budget.turns.take();
}

/** The 429 of a record charge over the workspace's budget. */
function recordsRefused(n: number, maxRecords: number, state: BudgetState): HttpError {
  const retry = String(Math.max(1, state.resetSeconds));
  return new HttpError(
    429,
    'rate_limited',
    n > maxRecords
      ? `${n} records is more than this workspace's budget of ${maxRecords} records a minute; split the batch`
      : `more than ${maxRecords} records in a minute for this workspace (${state.remaining} left in this minute); retry in ${retry} s`,
    undefined,
    { 'retry-after': retry },
  );
}

/**
 * Decorates requests with `auth` and returns the hook to put on every endpoint.
 * The budgets count in real time (`Date.now()`, or the `budgetNowMs` a test gives), whatever clock
 * the application is given for records.
 */
export function createAuthHook(app: FastifyInstance, options: AuthOptions & { turns: TurnTaker }) {
  app.decorateRequest('auth', null);
  app.decorateRequest('recordBudget', null);
  const maxRequests = options.rateLimitPerMinute;
  const limitHeader = String(maxRequests);
  const budgetNowMs = options.budgetNowMs ?? Date.now;
  const recordBudget: RecordBudget = { budget: options.store.budget, maxRecords: options.recordsPerMinute, nowMs: budgetNowMs, turns: options.turns };

  /** The checks; throws the HttpError to answer with. */
  async function check(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    if (header === undefined || header === '') throw unauthorized('the Authorization header is missing; send Authorization: Bearer <API key>');
    const match = header.length <= MAX_KEY_LENGTH + 16 ? BEARER.exec(header) : null;
    if (!match) throw unauthorized('the Authorization header must be Bearer followed by the API key');
    if (hasSecondAuthorization(request.raw.rawHeaders)) throw badRequest('the request has more than one Authorization header; send exactly one');
    const { workspace_id: pathWorkspaceId } = request.params as { workspace_id?: string };
    const records = request.routeOptions.config.recordsPerRequest ?? 0;
    // The key, the path's workspace, the request budget and a single write's record in one step of
    // the store: nothing is counted for an invalid key or another workspace's path.
    const admission = await options.store.admit({
      apiKey: match[1],
      nowMs: options.nowMs(),
      ...(pathWorkspaceId !== undefined ? { pathWorkspaceId } : {}),
      budgetNowMs: budgetNowMs(),
      maxRequests,
      records,
      maxRecords: options.recordsPerMinute,
    });
    if (admission.auth === null) throw unauthorized('the API key is not valid: unknown, revoked or expired');
    if (!admission.counted) throw notFound('workspace not found');
    // Before anything is read or stored: a key's role bounds what it may do in its workspace.
    const access = routeAccess(request.method, request.routeOptions.config);
    if (!roleAdmits(admission.auth.role, access)) {
      throw forbidden(
        access === 'admin'
          ? `this API key's role is ${admission.auth.role}: changing the gate policy needs an admin key`
          : `this API key's role is ${admission.auth.role}: it reads and writes nothing; writing needs a writer key`,
      );
    }
    request.auth = admission.auth;
    request.recordBudget = recordBudget;

    const limit = admission.requests;
    void reply
      .header('x-ratelimit-limit', limitHeader)
      .header('x-ratelimit-remaining', String(limit.remaining))
      .header('x-ratelimit-reset', String(limit.resetSeconds));
    if (limit.exceeded) {
      throw new HttpError(
        429,
        'rate_limited',
        `more than ${maxRequests} requests in a minute for this workspace; retry in ${limit.resetSeconds} s`,
        undefined,
        { 'retry-after': String(Math.max(1, limit.resetSeconds)) },
      );
    }
    if (admission.records?.exceeded) throw recordsRefused(records, options.recordsPerMinute, admission.records);
  }

  return function authenticate(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    check(request, reply).then(
      () => done(),
      (error: unknown) => done(error as Error),
    );
  };
}
