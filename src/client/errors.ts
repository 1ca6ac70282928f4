/**
 * Typed errors of the client library. Every error the library throws is an {@link AttestationError}
 * (the name existing clients of the service use for every client error); the subclass says what
 * kind of failure it is, so callers (and the CLI's exit codes) decide by class, never by message.
 *
 * {@link errorFromResponse} is the ONE place that turns an HTTP status and body into an error
 * so the classes cannot drift between endpoints. Secrets (the API key, the signing key) never appear in a message: the key is
 * never put into one, and text that came from the service is scrubbed of the API key anyway.
 */
import type { ValidationIssue } from '../core/records/types.js';
import { isPlainObject, parseJsonLossless } from '../core/canonical-json.js';

/**
 * The closed set of error codes. The service's codes (docs/service.md "Errors") are used as the service sent them;
 * the others are the library's own.
 */
export type AttestationErrorCode =
  // the service's codes (docs/service.md "Errors", docs/wire-format.md)
  | 'bad_request'
  | 'validation_error'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'payload_too_large'
  | 'rate_limited'
  | 'server_error'
  /** 503 from govctl's service: it cannot do this now (a database that went away, no log key); retry later */
  | 'service_unavailable'
  // the library's own
  | 'http_error'
  | 'network_error'
  | 'timeout'
  | 'malformed_response'
  | 'config_error'
  | 'workspace_unresolved'
  | 'client_closed'
  | 'internal_error';

/** The text existing clients print when no workspace id can be found (docs/library.md "Errors"). */
export const WORKSPACE_UNRESOLVED_MESSAGE = 'workspace id is not set and could not be resolved automatically';

/** What every error may carry besides its message. */
export interface AttestationErrorOptions {
  /** HTTP status of the reply that caused it, when there was one */
  status?: number;
  /** the offending field as a dotted path (the service's `field`, or the first local issue) */
  field?: string;
  /** the service's request id (`x-request-id` reply header), for support */
  requestId?: string;
  cause?: unknown;
}

/**
 * Base class of every error the client library throws (the name existing clients use
 * for every client error). Decide on the subclass or on {@link AttestationError.code}, never on the text.
 *
 * @example
 * try { await client.modelEvaluation({...}) } catch (error) {
 *   if (error instanceof RateLimitedError) console.log(`retry in ${error.retryAfterMs} ms`);
 * }
 */
export class AttestationError extends Error {
  override name = 'AttestationError';
  readonly code: AttestationErrorCode;
  readonly status?: number;
  readonly field?: string;
  readonly requestId?: string;

  constructor(code: AttestationErrorCode, message: string, options: AttestationErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.status !== undefined) this.status = options.status;
    if (options.field !== undefined) this.field = options.field;
    if (options.requestId !== undefined) this.requestId = options.requestId;
  }
}

/**
 * The record or request is invalid: found locally before sending (then {@link ValidationError.issues}
 * lists every problem), or answered 400/413/422 by the service (then `field` names the offending field).
 */
export class ValidationError extends AttestationError {
  override name = 'ValidationError';
  /** every problem found locally, with dotted paths; empty for the service's answers (see `field`) */
  readonly issues: readonly ValidationIssue[];

  constructor(code: AttestationErrorCode, message: string, options: AttestationErrorOptions & { issues?: readonly ValidationIssue[] } = {}) {
    super(code, message, options);
    this.issues = options.issues ?? [];
  }

  /** A local validation failure listing every issue at once (one round trip tells the caller everything). */
  static fromIssues(what: string, issues: readonly ValidationIssue[]): ValidationError {
    const listed = issues.map((found) => (found.path ? `${found.path} ${found.message}` : found.message)).join('; ');
    return new ValidationError('validation_error', `${what} is invalid: ${listed}`, { issues, field: issues[0]?.path || undefined });
  }
}

/** The API key is missing, invalid or expired (401), or lacks access (403: treated like 401, docs/service.md "Errors"). */
export class UnauthorizedError extends AttestationError {
  override name = 'UnauthorizedError';
}

/** 404: the workspace (or record, or system) does not exist, or the key does not belong to it. */
export class NotFoundError extends AttestationError {
  override name = 'NotFoundError';
}

/** 429, and still 429 after waiting for `Retry-After` and retrying once (docs/library.md "Settings"). */
export class RateLimitedError extends AttestationError {
  override name = 'RateLimitedError';
  /** how long the service asked to wait, in ms (its last `Retry-After`), if it said */
  readonly retryAfterMs?: number;

  constructor(message: string, options: AttestationErrorOptions & { retryAfterMs?: number } = {}) {
    super('rate_limited', message, options);
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }
}

/** 5xx: the service failed. Never retried: a POST may have been applied (docs/library.md "Settings"). */
export class ServerError extends AttestationError {
  override name = 'ServerError';
}

/**
 * The service could not be reached, did not answer within the timeout (`timedOut`), or answered
 * something that is not a reply of the service (a 2xx body that is not JSON, an unexpected status).
 * Never retried: a POST may have been applied.
 */
export class NetworkError extends AttestationError {
  override name = 'NetworkError';
  /** true when the attempt was abandoned after the client timeout (15 s, docs/library.md "Settings") */
  readonly timedOut: boolean;

  constructor(code: AttestationErrorCode, message: string, options: AttestationErrorOptions & { timedOut?: boolean } = {}) {
    super(code, message, options);
    this.timedOut = options.timedOut ?? false;
  }
}

/**
 * A setting is missing or malformed (API key, system name, base URL, signing key), or the
 * workspace id is not set and could not be resolved through GET /api/me (docs/library.md "Errors").
 */
export class ConfigError extends AttestationError {
  override name = 'ConfigError';

  constructor(message: string, options: AttestationErrorOptions & { code?: AttestationErrorCode } = {}) {
    super(options.code ?? 'config_error', message, options);
  }
}

/**
 * The same error (same class, code, status, field) with another message and the original as its
 * cause: for adding context such as how many records a failure cost.
 */
export function withMessage<E extends AttestationError>(error: E, message: string): E {
  const copy = Object.create(Object.getPrototypeOf(error) as object) as E;
  Object.defineProperties(copy, Object.getOwnPropertyDescriptors(error));
  Object.defineProperty(copy, 'message', { value: message, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(copy, 'cause', { value: error, writable: true, configurable: true, enumerable: false });
  return copy;
}

/** Replaces every occurrence of each secret with `***`. */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('***');
  return out;
}

/** The service's error body (docs/service.md "Errors"), when the reply has that shape. */
export interface ServiceErrorBody {
  error: string;
  message?: string;
  field?: string;
}

/** Reads the error body of a reply; undefined when it is not JSON or not the docs/service.md "Errors" shape. */
export function parseErrorBody(text: string): ServiceErrorBody | undefined {
  let parsed: unknown;
  try {
    parsed = parseJsonLossless(text);
  } catch {
    return undefined;
  }
  if (!isPlainObject(parsed) || typeof parsed.error !== 'string') return undefined;
  const body: ServiceErrorBody = { error: parsed.error };
  if (typeof parsed.message === 'string') body.message = parsed.message;
  if (typeof parsed.field === 'string') body.field = parsed.field;
  return body;
}

/** What {@link errorFromResponse} needs to know besides status and body. */
export interface ResponseContext {
  /** e.g. `POST /api/workspaces/ws_1/governance/grc/evidence`, for the message */
  request: string;
  /** the `x-request-id` reply header */
  requestId?: string;
  /** a 429's `Retry-After`, already parsed to ms */
  retryAfterMs?: number;
  /** texts to scrub from anything the service said (the API key) */
  secrets?: readonly (string | undefined)[];
}

const DEFAULT_CODES: Record<number, AttestationErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  413: 'payload_too_large',
  422: 'validation_error',
  429: 'rate_limited',
};

/**
 * The one mapping from a non-2xx HTTP reply to an error. The status decides the
 * class; the body (docs/service.md "Errors" shape: `error`, `message`, `field`) supplies code, text and field. A body
 * that is not that shape (a proxy's HTML page) still gets the class of its status, with a message
 * that says so.
 *
 * | status | error |
 * |---|---|
 * | 400, 413, 422, other 4xx | {@link ValidationError} |
 * | 401, 403 | {@link UnauthorizedError} |
 * | 404 | {@link NotFoundError} |
 * | 429 | {@link RateLimitedError} |
 * | 5xx | {@link ServerError} |
 * | 1xx, 3xx, anything else | {@link NetworkError} (`malformed_response`) |
 *
 * @example errorFromResponse(401, '{"error":"unauthorized","message":"invalid API key"}', { request: 'GET /api/me' })
 */
export function errorFromResponse(status: number, bodyText: string, context: ResponseContext): AttestationError {
  const body = parseErrorBody(bodyText);
  const secrets = context.secrets ?? [];
  const said = body ? redact(body.message ?? body.error, secrets) : undefined;
  const field = body?.field !== undefined ? redact(body.field, secrets) : undefined;
  const fallbackCode: AttestationErrorCode = DEFAULT_CODES[status] ?? (status >= 500 ? 'server_error' : 'http_error');
  // The service's code when it sent one of the known ones; otherwise the status's.
  const code = body && isKnownServiceCode(body.error) ? body.error : fallbackCode;
  const detail = said ?? `the reply was not a service error (${status}); is the base URL right?`;
  // The request line holds the workspace id the service named (GET /api/me), and the request id is
  // the service's header: both are scrubbed like its text, since the error is printed and inspected.
  const message = redact(`${context.request} failed: ${status} ${code}: ${detail}${field ? ` (field: ${field})` : ''}`, secrets);
  const requestId = context.requestId === undefined ? undefined : redact(context.requestId, secrets);
  const options = { status, field, requestId };

  if (status === 401 || status === 403) {
    return new UnauthorizedError(code, `${message}. Check the API key (SERVICE_API_KEY) and that it belongs to this workspace`, options);
  }
  if (status === 404) return new NotFoundError(code, message, options);
  if (status === 429)
    return new RateLimitedError(`${message}. Still rate limited after waiting and retrying once`, { ...options, retryAfterMs: context.retryAfterMs });
  if (status >= 500 && status <= 599) return new ServerError(code, message, options);
  if (status >= 400 && status <= 499) return new ValidationError(code, message, options);
  return new NetworkError('malformed_response', redact(`${context.request} failed: unexpected HTTP status ${status}`, secrets), options);
}

const SERVICE_CODES = new Set<string>([
  'bad_request',
  'validation_error',
  'unauthorized',
  'forbidden',
  'not_found',
  'payload_too_large',
  'rate_limited',
  'server_error',
  'service_unavailable',
]);

function isKnownServiceCode(code: string): code is AttestationErrorCode {
  return SERVICE_CODES.has(code);
}
