/**
 * The service application: one Fastify instance with the lossless JSON body parser, the auth and
 * rate-limit hook, one error handler, a log line per request, and a route module per endpoint
 * group. `govctl serve` listens with it (serve.ts); the embedded local store calls the very same
 * application in-process (local-store.ts), so every endpoint has one implementation.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { createAuthHook, routeAccess, type RouteAccess } from './auth.js';
import { closeWithoutReadingBody, createGatedServer } from './connections.js';
import { createErrorHandler, type ErrorBody, type LogLine } from './errors.js';
import { newRequestId } from './ids.js';
import { BODY_LIMIT, registerJsonBodyParser } from './json-body.js';
import { registerAttestationRoutes } from './routes/attestations.js';
import type { RouteDeps } from './routes/deps.js';
import { registerDeriveRoutes } from './routes/derive.js';
import { registerEvidenceRoutes } from './routes/evidence.js';
import { registerGatePolicyRoutes } from './routes/gate-policy.js';
import { registerHealthRoute, registerIdentityRoutes } from './routes/identity.js';
import { DEFAULT_LIMITS, resolveLimits, TurnTaker, type ServiceLimits } from './limits.js';
import { registerPostureRoutes } from './routes/posture.js';
import { registerLedgerRoutes } from './routes/ledger.js';
import type { SigningKey } from '../core/signing/keys.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/store.js';
import { VerifyPool } from './verify-pool.js';

/** Requests per minute per workspace (spec §8). */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = DEFAULT_LIMITS.requestsPerMinute;

export interface AppOptions {
  /** the store's location: a SQLite database file, or `:memory:` (store/open-store.ts) */
  db: string;
  /** the clock (default: the system clock) */
  now?: () => Date;
  /** where the per-request log lines and error causes go (default: nowhere) */
  logLine?: LogLine;
  /** requests per minute per workspace (default 2000, spec §8); the same as `limits.requestsPerMinute` */
  rateLimitPerMinute?: number;
  /** budgets, caps and timeouts (limits.ts; every member defaults to DEFAULT_LIMITS) */
  limits?: Partial<ServiceLimits>;
  /** the budgets' clock, epoch ms (default Date.now): tests move it instead of waiting a minute */
  budgetNowMs?: () => number;
  /**
   * worker threads that check the signatures of attestation batches (verify-pool.ts; default 0:
   * checked in the request, as the embedded store does)
   */
  verifyWorkers?: number;
  /** the transparency log (ledger/log.ts, docs/ledger.md) */
  ledger?: AppLedgerOptions;
  /**
   * answer HEAD for every GET route (default true, as an HTTP service should). The embedded store
   * passes false: its only client is the command line in the same process, which never sends HEAD,
   * and each route costs its start-up (Fastify compiles its matchers then): 18 fewer routes.
   */
  headRoutes?: boolean;
}

/** How the application keeps its transparency log. */
export interface AppLedgerOptions {
  /** the log's Ed25519 key (read from its file by the caller); without it no checkpoint is signed */
  key?: SigningKey | null;
  /** the origin prefix (default govctl.local/ledger) */
  originPrefix?: string;
  /**
   * `timer` (default): integrate every 250 ms; `on-read`: before every ledger read and at close
   * (the embedded store); `manual`: only when `store.ledger.integrate()` is called (tests, bench)
   */
  integration?: 'timer' | 'on-read' | 'manual';
}

export interface ServiceApp {
  app: FastifyInstance;
  store: Store;
  /** verify workers started (0: batch signatures are checked in the request) */
  readonly verifyWorkers: number;
  /** the limits in force */
  readonly limits: Readonly<ServiceLimits>;
  /** every authenticated route, with what it does (which decides the key roles it admits: auth.ts) */
  readonly routes: readonly ServiceRoute[];
  /** stops the application (in-flight requests finish), commits queued writes and closes the database */
  close(): Promise<void>;
}

/** One route of the application, as its key-role check sees it. */
export interface ServiceRoute {
  method: string;
  url: string;
  access: RouteAccess;
}

/** Longest path written to a log line. */
const MAX_LOGGED_PATH = 512;

function errorResponse(reply: FastifyReply, status: number, body: ErrorBody): void {
  closeWithoutReadingBody(reply.request.raw, reply.raw);
  void reply.code(status).send(body);
}

/** A malformed HTTP request (before Fastify sees a request): answer in the error shape and close. */
function handleClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return;
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'the request headers are too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request did not arrive in time']
        : [400, 'malformed HTTP request'];
  const body = JSON.stringify({ error: 'bad_request', message } satisfies ErrorBody);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The compilers' factory of a service without schemas: a schema added to a route fails at start. */
function noSchemaCompiler(): never {
  throw new Error('the service compiles no JSON schemas: a route validates its own input (json-body.ts, query.ts)');
}

/**
 * Builds the service application (not listening; see startServer).
 *
 * @example
 * const { app, close } = await createApp({ db: ':memory:' });
 * const reply = await app.inject({ method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${key}` } });
 * await close();
 */
export async function createApp(options: AppOptions): Promise<ServiceApp> {
  const limits = resolveLimits({
    ...(options.rateLimitPerMinute !== undefined ? { requestsPerMinute: options.rateLimitPerMinute } : {}),
    ...options.limits,
  });
  const turns = new TurnTaker();
  const store = await openStore(options.db, {
    ledger: {
      ...(options.ledger?.key ? { key: options.ledger.key } : {}),
      ...(options.ledger?.originPrefix !== undefined ? { originPrefix: options.ledger.originPrefix } : {}),
      ...(options.now ? { nowMs: () => options.now!().getTime() } : {}),
    },
  });
  const integration = options.ledger?.integration ?? 'timer';
  if (integration === 'timer') store.ledger.start();
  const logLine: LogLine = options.logLine ?? (() => {});
  const clock = options.now ?? (() => new Date());
  const verifyPool = VerifyPool.start(options.verifyWorkers ?? 0);
  const deps: RouteDeps = { store, nowMs: () => clock().getTime(), verifyPool };
  const handleError = createErrorHandler(logLine);

  const app = Fastify({
    logger: false,
    exposeHeadRoutes: options.headRoutes ?? true,
    bodyLimit: BODY_LIMIT,
    genReqId: newRequestId,
    // After close() starts, requests already on an open connection are still served (they finish
    // what a client began); no new connections are accepted.
    return503OnClosing: false,
    // The HTTP server with backpressure per connection and the limits' caps and timeouts (connections.ts).
    serverFactory: (handler) => createGatedServer(handler, limits),
    clientErrorHandler: handleClientError,
    frameworkErrors: (error, request, reply) => handleError(error, request, reply),
    // No route declares a JSON schema: each validates its input itself (json-body.ts, query.ts)
    // and writes its reply with JSON.stringify. Fastify would otherwise load Ajv and
    // fast-json-stringify for its default compilers (4–6 ms of every start, the embedded store's
    // included) to compile nothing.
    schemaController: { compilersFactory: { buildValidator: noSchemaCompiler, buildSerializer: noSchemaCompiler } },
  });

  // A client may half-close its side once it has sent a request (`socket.end(request)`). Node's
  // default then aborts the request and ends the socket at once, so a reply not yet written (a write
  // waiting for its group commit, see store/sqlite/writer.ts) would be lost although the write commits.
  // With half-open allowed, Node sends the reply in progress and then closes the connection.
  (app.server as { httpAllowHalfOpen?: boolean }).httpAllowHalfOpen = true;

  const routes: ServiceRoute[] = [];
  try {
    registerJsonBodyParser(app, turns);
    app.setErrorHandler(handleError);
    app.setNotFoundHandler((_request, reply) => errorResponse(reply, 404, { error: 'not_found', message: 'no such endpoint' }));

    // Callback hooks, not async ones: an async hook costs a promise and a microtask per request.
    app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      void reply.header('x-request-id', request.id);
      done();
    });
    // One structured line per request: never headers, bodies, query strings or keys. Written as
    // a template (the fields are known) rather than through an object and JSON.stringify.
    app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      const url = request.url;
      const query = url.indexOf('?');
      const path = query === -1 ? url : url.slice(0, query);
      const logged = path.length > MAX_LOGGED_PATH ? `${path.slice(0, MAX_LOGGED_PATH)}…` : path;
      logLine(
        `{"level":"info","time":"${new Date().toISOString()}","request_id":${JSON.stringify(request.id)},"method":${JSON.stringify(request.method)},` +
          `"path":${JSON.stringify(logged)},"status":${reply.statusCode},"duration_ms":${Math.round(reply.elapsedTime * 100) / 100}}`,
      );
      done();
    });

    const authenticate = createAuthHook(app, {
      store,
      nowMs: deps.nowMs,
      rateLimitPerMinute: limits.requestsPerMinute,
      recordsPerMinute: limits.recordsPerMinute,
      turns,
      ...(options.budgetNowMs !== undefined ? { budgetNowMs: options.budgetNowMs } : {}),
    });
    registerHealthRoute(app, store);
    await app.register(async (api) => {
      api.addHook('onRequest', authenticate);
      api.addHook('onRoute', (route) => {
        for (const method of [route.method].flat()) routes.push({ method, url: route.url, access: routeAccess(method, route.config ?? {}) });
      });
      registerIdentityRoutes(api);
      registerEvidenceRoutes(api, deps);
      registerAttestationRoutes(api, deps);
      registerPostureRoutes(api, deps);
      registerGatePolicyRoutes(api, deps);
      registerDeriveRoutes(api, deps);
      registerLedgerRoutes(api, deps, { integrateOnRead: integration === 'on-read' });
    });
    await app.ready();
  } catch (error) {
    await verifyPool?.close();
    await store.close();
    throw error;
  }

  return {
    app,
    store,
    verifyWorkers: verifyPool?.size ?? 0,
    limits,
    routes,
    async close() {
      await app.close();
      await verifyPool?.close();
      await store.close();
    },
  };
}
