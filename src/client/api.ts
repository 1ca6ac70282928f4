/**
 * The wire-shaped service API: one method per endpoint (spec §4), snake_case in and out, over any
 * {@link Transport}. It owns the parts every call shares: headers, the retry policy (429 → wait,
 * retry once; 5xx and network errors never retried), lossless JSON both ways, error mapping and
 * workspace resolution. {@link GovernanceClient} and the CLI are built on it.
 */
import { isPlainObject, JsonSyntaxError, parseJsonLossless, stringifyJson, type JsonValue } from '../core/canonical-json.js';
import {
  AttestationError,
  ConfigError,
  NetworkError,
  NotFoundError,
  ValidationError,
  WORKSPACE_UNRESOLVED_MESSAGE,
  errorFromResponse,
  redact,
} from './errors.js';
import { DEFAULT_RETRY_POLICY, decideFailureRetry, decideRetry, defaultSleep, parseRetryAfter, type AttemptOutcome, type RetryPolicy } from './retry.js';
import { createHttpTransport, type Transport, type TransportRequest, type TransportResponse } from './transport.js';
import { stopwatch } from './stopwatch.js';
import { DEFAULT_USER_AGENT } from './version.js';
import type {
  AttestationList,
  AttestationQuery,
  AttestationResultBody,
  BatchResultBody,
  ControlRecommendation,
  DeriveControlsRequest,
  EvidenceBatchResultBody,
  EvidenceExportQuery,
  EvidenceList,
  EvidenceQuery,
  Gate,
  GatePolicyList,
  GatePolicyLog,
  GrcWriteResult,
  Identity,
  PostureBrief,
  StoredAttestation,
  StoredEvidenceRecord,
  SystemInfo,
} from './wire-types.js';

/**
 * One finished attempt, for tracing (`govctl -v`). Never carries headers, bodies or keys.
 */
export interface RequestTrace {
  method: string;
  /** the base URL (or the transport's description) and the path with its query */
  url: string;
  /** the reply's status; absent when no reply came */
  status?: number;
  /** time the attempt took, in ms */
  durationMs: number;
  /** 1 for the first attempt, 2 for the retry after a 429 */
  attempt: number;
  /** why no reply came (network error or timeout) */
  error?: string;
}

/** Options of {@link createServiceApi}. */
export interface ServiceApiOptions {
  /** the service's address; used when no `transport` is given */
  baseUrl?: string;
  /** carries the requests (default: an HTTP transport to `baseUrl`); a given transport stays the caller's to close */
  transport?: Transport;
  /** the API key, sent as `Authorization: Bearer <key>` (spec §5) */
  apiKey: string;
  /** the workspace; when absent it is resolved once through GET /api/me */
  workspaceId?: string;
  /** `User-Agent` header (default `govctl/<version>`) */
  userAgent?: string;
  /** called after every attempt with method, URL, status and duration (never headers or keys) */
  onRequest?: (trace: RequestTrace) => void;
  /** the wait before a retry (injectable for tests; default a timer that a request's `signal` ends) */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** told before each wait for a retry of a call that gives no `onWait` of its own (CallOptions) */
  onWait?: (waitMs: number, why: 'rate_limited' | 'retry') => void;
  /**
   * Per-attempt timeout of the HTTP transport created from `baseUrl`, in ms. Fixed at 15 000 by the
   * specification (§8); the option exists for tests.
   * @internal
   */
  timeoutMs?: number;
  /** overrides of the retry policy (default: retry a 429 once, wait at most 60 s) */
  retryPolicy?: Partial<RetryPolicy>;
  /** the clock, for reading `Retry-After` dates (default: the system clock) */
  now?: () => Date;
}

/** Options of one call. */
export interface CallOptions {
  /** aborts the request and any wait before a retry */
  signal?: AbortSignal;
  /** told before each wait for a retry: how long, and why (`rate_limited`: a 429; `retry`: rule 4 of retry.ts) */
  onWait?: (waitMs: number, why: 'rate_limited' | 'retry') => void;
  /** retries after a 429 for this call (default: the policy's, once); a bulk command waits as often as told */
  rateLimitRetries?: number;
}

/** Options of a write. */
export interface WriteOptions extends CallOptions {
  /**
   * The write's idempotency key (`Idempotency-Key`, docs/service.md): a repeat with the same key
   * and content is answered with the first result and stores nothing. A write with a key is also
   * retried once after a 5xx or a timeout (retry.ts rule 4).
   */
  idempotencyKey?: string;
}

/** Options of {@link ServiceApi.postEvidence}. */
export interface PostEvidenceOptions extends WriteOptions {
  /** compute the mapped controls and store nothing (`?dry_run=true`, spec §4.2) */
  dryRun?: boolean;
}

/** Options of the batch writes. */
export interface BatchWriteOptions extends CallOptions {
  /** `?dry_run=true` (evidence only): judge and map, store nothing */
  dryRun?: boolean;
  /** every item carries an `idempotency_key`: the batch may then be retried once (retry.ts rule 4) */
  idempotent?: boolean;
}

/** One page of an evidence export (NDJSON text, each line a stored record exactly as stored). */
export interface EvidenceExportPage {
  /** the page's lines, each ending in a newline */
  text: string;
  /** lines in the page */
  count: number;
  /** record_id of the page's last line: the `after` of the next page (undefined when empty) */
  lastRecordId?: string;
}

/**
 * The service's endpoints, wire-shaped (spec §4). Each method returns the reply body as parsed
 * (losslessly) or throws an {@link AttestationError} subclass.
 */
export interface ServiceApi {
  /** GET /api/me: whose key this is (spec §4.1). */
  me(): Promise<Identity>;
  /**
   * The workspace id: the configured one, or `workspace_id` of GET /api/me, asked once and then
   * remembered (concurrent callers share the one request; a failed attempt is not remembered).
   * @throws ConfigError "workspace id is not set and could not be resolved automatically" when /api/me
   *   answers 404 or without a workspace id; UnauthorizedError, NetworkError, ServerError as they come.
   */
  resolveWorkspaceId(): Promise<string>;
  /** POST grc/evidence (spec §4.2); `dryRun` stores nothing. */
  postEvidence(record: object, options?: PostEvidenceOptions): Promise<GrcWriteResult>;
  /** GET grc/evidence (spec §4.3); `cursor` pages on with a previous `next_cursor`. */
  listEvidence(query?: EvidenceQuery): Promise<EvidenceList>;
  /** GET grc/evidence/{record_id}: the whole stored record (the service's extension). */
  getEvidence(recordId: string): Promise<StoredEvidenceRecord>;
  /**
   * POST grc/evidence/batch (the service's extension): each record judged alone, one result per
   * record in order; items may carry `idempotency_key`.
   */
  postEvidenceBatch(records: readonly object[], options?: BatchWriteOptions): Promise<EvidenceBatchResultBody>;
  /**
   * GET grc/evidence/export (the service's extension): one page of at most `query.limit` records
   * in the order stored, after `query.after`. Page on with `after: page.lastRecordId` until a page
   * has fewer records than asked for.
   */
  exportEvidence(query?: EvidenceExportQuery, options?: CallOptions): Promise<EvidenceExportPage>;
  /** POST attestations/external (spec §4.4). */
  postAttestation(record: object, options?: WriteOptions): Promise<AttestationResultBody>;
  /** POST attestations/batch (spec §4.5); items may carry `idempotency_key`. */
  postAttestationBatch(records: readonly object[], options?: BatchWriteOptions): Promise<BatchResultBody>;
  /** GET attestations (the service's extension): stored attestations, newest first, with a cursor. */
  listAttestations(query?: AttestationQuery): Promise<AttestationList>;
  /** GET attestations/{attestation_id} (the service's extension): one stored attestation, as signed. */
  getAttestation(attestationId: string): Promise<StoredAttestation>;
  /** GET grc/posture-brief (spec §4.6). */
  postureBrief(): Promise<PostureBrief>;
  /** GET grc/systems, optionally filtered by name (spec §4.7). */
  systems(name?: string): Promise<{ systems: SystemInfo[] }>;
  /** GET grc/gates/check (spec §4.8). */
  gatesCheck(): Promise<{ gates: Gate[] }>;
  /** GET grc/gates: the gate policy in effect (the service's extension). */
  gatePolicies(): Promise<GatePolicyList>;
  /**
   * GET grc/gates/policy (the service's extension): the gate policy in force and every logged
   * change of it, oldest first (docs/ledger.md, "Gate policy changes"). `workspaceId` defaults to
   * the API's workspace (the key's).
   */
  gatePolicy(workspaceId?: string): Promise<GatePolicyLog>;
  /** POST grc/derive-controls (spec §4.9). */
  deriveControls(body: DeriveControlsRequest): Promise<{ recommendations: ControlRecommendation[] }>;
  /**
   * A workspace-scoped request whose 2xx reply is returned as text with its status (the
   * transparency log's checkpoint, key and proofs, docs/ledger.md; `POST` with a JSON body).
   */
  workspaceText(method: 'GET' | 'POST', rest: string, body?: unknown): Promise<{ status: number; body: string; retryAfter?: string }>;
  /** A workspace-scoped GET whose 2xx reply is binary (tiles): its bytes. */
  workspaceBytes(rest: string): Promise<Buffer>;
  /** Closes the transport if this API created it. */
  close(): Promise<void>;
}

const HEADER_SAFE = /^[\x21-\x7e]+$/;

/**
 * Creates the wire-shaped API of the service over a transport.
 *
 * Every request carries `Authorization: Bearer <apiKey>`, `Accept: application/json`,
 * `User-Agent: govctl/<version>` and, with a body, `Content-Type: application/json`. Bodies are
 * written and read without loss of number form (`85.0` stays `85.0`, big integers keep every digit).
 *
 * @example
 * const api = createServiceApi({ baseUrl: 'https://governance.example.com', apiKey: process.env.SERVICE_API_KEY! });
 * const { overall_pct } = await api.postureBrief();
 * await api.close();
 * @throws ConfigError when the API key is empty or not a valid header value, or neither baseUrl nor transport is given
 */
export function createServiceApi(options: ServiceApiOptions): ServiceApi {
  const apiKey = typeof options.apiKey === 'string' ? options.apiKey.trim() : '';
  if (apiKey === '') throw new ConfigError('API key is not set: give apiKey or set SERVICE_API_KEY');
  if (!HEADER_SAFE.test(apiKey)) throw new ConfigError('API key contains characters that cannot be sent in an HTTP header (spaces or control characters)');
  let transport: Transport;
  let ownsTransport = false;
  if (options.transport) transport = options.transport;
  else if (options.baseUrl) {
    transport = createHttpTransport(options.baseUrl, options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs });
    ownsTransport = true;
  } else throw new ConfigError('base URL is not set: give baseUrl or set SERVICE_BASE_URL');

  const where = options.baseUrl ? options.baseUrl.replace(/\/+$/, '') : (transport.description ?? '');
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retryPolicy };
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? (() => new Date());
  const secrets = [apiKey];
  const baseHeaders: Record<string, string> = {
    authorization: `Bearer ${apiKey}`,
    accept: 'application/json',
    'user-agent': options.userAgent ?? DEFAULT_USER_AGENT,
  };
  const configuredWorkspace = options.workspaceId?.trim() || undefined;
  let workspace: Promise<string> | undefined = configuredWorkspace ? Promise.resolve(configuredWorkspace) : undefined;

  function trace(event: RequestTrace): void {
    try {
      options.onRequest?.(event);
    } catch {
      // A tracer's failure must not fail the request.
    }
  }

  /** One attempt: the transport's reply, or a NetworkError when none came. */
  async function attempt(req: TransportRequest, number: number, signal?: AbortSignal): Promise<TransportResponse> {
    const elapsed = stopwatch();
    const url = where + req.path;
    try {
      const reply = await (signal ? transport.request(req, signal) : transport.request(req));
      trace({ method: req.method, url, status: reply.status, durationMs: elapsed(), attempt: number });
      return reply;
    } catch (error) {
      const failure =
        error instanceof AttestationError
          ? error
          : new NetworkError(
              'network_error',
              `${req.method} ${req.path}: the request failed (${redact(error instanceof Error ? error.message : String(error), secrets)})`,
              { cause: error },
            );
      trace({ method: req.method, url, durationMs: elapsed(), attempt: number, error: failure.message });
      throw failure;
    }
  }

  /** Sends a request under the retry policy and returns the parsed 2xx body. */
  async function send<T>(
    method: TransportRequest['method'],
    path: string,
    body?: unknown,
    call: CallOptions & { idempotencyKey?: string; idempotent?: boolean } = {},
  ): Promise<T> {
    return parseReply<T>(await exchange(method, path, body, call), `${method} ${path.split('?')[0]}`);
  }

  /** Sends a request under the retry policy (retry.ts) and returns the 2xx reply. */
  async function exchange(
    method: TransportRequest['method'],
    path: string,
    body: unknown,
    call: CallOptions & { idempotencyKey?: string; idempotent?: boolean },
  ): Promise<TransportResponse> {
    const headers = { ...baseHeaders };
    const req: TransportRequest = { method, path, headers };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      req.body = stringifyJson(body);
    }
    if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey;
    const idempotent = call.idempotent === true || call.idempotencyKey !== undefined;
    const ratePolicy = call.rateLimitRetries === undefined ? policy : { ...policy, maxRateLimitRetries: call.rateLimitRetries };
    const label = `${method} ${path.split('?')[0]}`;
    let rateLimited = 0;
    let failures = 0;
    const wait = async (ms: number, why: 'rate_limited' | 'retry') => {
      (call.onWait ?? options.onWait)?.(ms, why);
      await sleep(ms, call.signal);
    };
    for (let number = 1; ; number++) {
      let reply: TransportResponse;
      try {
        reply = await attempt(req, number, call.signal);
      } catch (error) {
        const retryable = error instanceof NetworkError && (error.code === 'network_error' || error.code === 'timeout') && !call.signal?.aborted;
        const decision = retryable ? decideFailureRetry(++failures, { kind: 'network-error' }, idempotent, policy, now()) : { retry: false as const };
        if (!decision.retry) throw error;
        await wait(decision.waitMs, 'retry');
        continue;
      }
      if (reply.status >= 200 && reply.status < 300) return reply;
      const retryAfter = header(reply, 'retry-after');
      const outcome: AttemptOutcome = { kind: 'response', status: reply.status, retryAfter };
      const decision =
        reply.status === 429 ? decideRetry(++rateLimited, outcome, ratePolicy, now()) : decideFailureRetry(++failures, outcome, idempotent, policy, now());
      if (decision.retry) {
        await wait(decision.waitMs, reply.status === 429 ? 'rate_limited' : 'retry');
        continue;
      }
      throw errorFromResponse(reply.status, reply.body, {
        request: label,
        requestId: header(reply, 'x-request-id'),
        retryAfterMs: reply.status === 429 ? parseRetryAfter(retryAfter, now()) : undefined,
        secrets,
      });
    }
  }

  async function workspacePath(rest: string): Promise<string> {
    const id = await resolveWorkspaceId();
    return `/api/workspaces/${encodeURIComponent(id)}/governance/${rest}`;
  }

  function resolveWorkspaceId(): Promise<string> {
    workspace ??= lookUpWorkspace().catch((error: unknown) => {
      workspace = undefined; // not remembered: the next call asks again
      throw error;
    });
    return workspace;
  }

  async function lookUpWorkspace(): Promise<string> {
    let identity: Identity;
    try {
      identity = await send<Identity>('GET', '/api/me');
    } catch (error) {
      // A bad key, an unreachable or failing service keep their own error (and exit code); what
      // remains means this service cannot say which workspace the key belongs to.
      if (error instanceof NotFoundError || error instanceof ValidationError || (error instanceof NetworkError && error.code === 'malformed_response')) {
        throw new ConfigError(WORKSPACE_UNRESOLVED_MESSAGE, { code: 'workspace_unresolved', status: error.status, cause: error });
      }
      throw error;
    }
    const id = identity.workspace_id;
    if (typeof id !== 'string' || id.trim() === '') {
      throw new ConfigError(WORKSPACE_UNRESOLVED_MESSAGE, { code: 'workspace_unresolved', cause: new Error('GET /api/me answered without a workspace_id') });
    }
    return id;
  }

  return {
    me: () => send<Identity>('GET', '/api/me'),
    resolveWorkspaceId,
    async postEvidence(record, postOptions = {}) {
      return send<GrcWriteResult>('POST', (await workspacePath('grc/evidence')) + (postOptions.dryRun ? '?dry_run=true' : ''), record, postOptions);
    },
    async postEvidenceBatch(records, batchOptions = {}) {
      return send<EvidenceBatchResultBody>(
        'POST',
        (await workspacePath('grc/evidence/batch')) + (batchOptions.dryRun ? '?dry_run=true' : ''),
        { records },
        batchOptions,
      );
    },
    async exportEvidence(query = {}, callOptions = {}) {
      const reply = await exchange('GET', (await workspacePath('grc/evidence/export')) + queryString(query), undefined, callOptions);
      return exportPage(reply.body);
    },
    async listEvidence(query = {}) {
      return send<EvidenceList>('GET', (await workspacePath('grc/evidence')) + queryString(query));
    },
    async getEvidence(recordId) {
      return send<StoredEvidenceRecord>('GET', await workspacePath(`grc/evidence/${encodeURIComponent(recordId)}`));
    },
    async postAttestation(record, writeOptions = {}) {
      return send<AttestationResultBody>('POST', await workspacePath('attestations/external'), record, writeOptions);
    },
    async postAttestationBatch(records, batchOptions = {}) {
      return send<BatchResultBody>('POST', await workspacePath('attestations/batch'), { records }, batchOptions);
    },
    async listAttestations(query = {}) {
      return send<AttestationList>('GET', (await workspacePath('attestations')) + queryString(query));
    },
    async getAttestation(attestationId) {
      return send<StoredAttestation>('GET', await workspacePath(`attestations/${encodeURIComponent(attestationId)}`));
    },
    async postureBrief() {
      return send<PostureBrief>('GET', await workspacePath('grc/posture-brief'));
    },
    async systems(name) {
      return send<{ systems: SystemInfo[] }>('GET', (await workspacePath('grc/systems')) + queryString({ name }));
    },
    async gatesCheck() {
      return send<{ gates: Gate[] }>('GET', await workspacePath('grc/gates/check'));
    },
    async gatePolicies() {
      return send<GatePolicyList>('GET', await workspacePath('grc/gates'));
    },
    async gatePolicy(workspaceId) {
      const path =
        workspaceId === undefined ? await workspacePath('grc/gates/policy') : `/api/workspaces/${encodeURIComponent(workspaceId)}/governance/grc/gates/policy`;
      return send<GatePolicyLog>('GET', path);
    },
    async deriveControls(body) {
      return send<{ recommendations: ControlRecommendation[] }>('POST', await workspacePath('grc/derive-controls'), body);
    },
    async workspaceText(method, rest, body) {
      const reply = await exchange(method, await workspacePath(rest), body, {});
      const retryAfter = header(reply, 'retry-after');
      return { status: reply.status, body: reply.body, ...(retryAfter !== undefined ? { retryAfter } : {}) };
    },
    async workspaceBytes(rest) {
      const reply = await exchange('GET', await workspacePath(rest), undefined, {});
      if (!reply.bytes) throw new NetworkError('malformed_response', `GET ${rest}: the transport does not carry binary replies`);
      return reply.bytes;
    },
    async close() {
      if (ownsTransport) await transport.close?.();
    },
  };
}

/** A reply header's value (the first, if repeated). */
function header(reply: TransportResponse, name: string): string | undefined {
  const value = reply.headers[name] ?? reply.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** `?a=1&b=2` of the defined members, or '' when none is. */
function queryString(query: object): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The record id at the start of an export line: `{"record_id":"…"` (storedRecordJson's first member). */
const LINE_RECORD_ID = /^\{"record_id":"([^"\\]{1,64})"/;

/** An export reply as a page: its text, line count and last record id (read from the last line's start). */
function exportPage(text: string): EvidenceExportPage {
  if (text === '') return { text, count: 0 };
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  const body = text.endsWith('\n') ? text : `${text}\n`;
  if (!text.endsWith('\n')) count++;
  const lastStart = body.lastIndexOf('\n', body.length - 2) + 1;
  const id = LINE_RECORD_ID.exec(body.slice(lastStart, lastStart + 100))?.[1];
  if (id === undefined)
    throw new NetworkError('malformed_response', 'GET grc/evidence/export: a line of the reply is not a stored record; is the base URL right?');
  return { text: body, count, lastRecordId: id };
}

/** A 2xx body as lossless JSON; anything that is not a JSON object is not a reply of the service. */
function parseReply<T>(reply: TransportResponse, label: string): T {
  let parsed: JsonValue;
  try {
    parsed = parseJsonLossless(reply.body);
  } catch (error) {
    const why = error instanceof JsonSyntaxError ? error.message : String(error);
    throw new NetworkError('malformed_response', `${label}: the reply (${reply.status}) is not JSON (${why}); is the base URL right?`, {
      status: reply.status,
      cause: error,
    });
  }
  if (!isPlainObject(parsed)) {
    throw new NetworkError('malformed_response', `${label}: the reply (${reply.status}) is not a JSON object; is the base URL right?`, {
      status: reply.status,
    });
  }
  return parsed as T;
}
