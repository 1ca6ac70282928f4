/**
 * HTTP errors and the one error handler that shapes every error body (spec §7, wire.md §5):
 * `{ error, message, field? }`. Handlers throw {@link HttpError}; anything else is a bug and
 * becomes a generic 500 whose cause goes to the log with the request id, never to the client.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ValidationIssue } from '../core/index.js';
import { closeWithoutReadingBody } from './connections.js';
import { DatabaseFileChangedError, DatabaseUnavailableError, UnstorableValueError } from './store/errors.js';

/** Every `error` code the service answers with. */
export const ERROR_CODES = [
  'bad_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'payload_too_large',
  'validation_error',
  'rate_limited',
  'server_error',
  'service_unavailable',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The error body of spec §7. */
export interface ErrorBody {
  error: ErrorCode;
  message: string;
  field?: string;
}

/** An error a handler means to answer with: a status, a code from {@link ERROR_CODES}, and a message safe to show. */
export class HttpError extends Error {
  override readonly name = 'HttpError';

  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    /** dotted path of the offending field (wire.md §5), when one applies */
    readonly field?: string,
    /** extra response headers, e.g. `Retry-After` */
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(message);
  }

  body(): ErrorBody {
    return this.field ? { error: this.code, message: this.message, field: this.field } : { error: this.code, message: this.message };
  }
}

export function badRequest(message: string): HttpError {
  return new HttpError(400, 'bad_request', message);
}

export function notFound(message: string): HttpError {
  return new HttpError(404, 'not_found', message);
}

export function unauthorized(message: string): HttpError {
  return new HttpError(401, 'unauthorized', message);
}

/** 403: the key is valid, but its role does not allow the request (docs/security.md, "API key roles"). */
export function forbidden(message: string): HttpError {
  return new HttpError(403, 'forbidden', message);
}

/** 422 on one field. */
export function invalidField(field: string, message: string): HttpError {
  return new HttpError(422, 'validation_error', `${field} ${message}`, field);
}

/** Issues named in one message; beyond this many, the rest are counted. */
const MAX_ISSUES_IN_MESSAGE = 20;

/** `a.b must …; c is required` for a list of issues, the first {@link MAX_ISSUES_IN_MESSAGE} of them. */
export function describeIssues(issues: readonly ValidationIssue[]): string {
  const shown = issues.slice(0, MAX_ISSUES_IN_MESSAGE).map((issue) => (issue.path ? `${issue.path} ${issue.message}` : issue.message));
  const more = issues.length - shown.length;
  return shown.join('; ') + (more > 0 ? `; and ${more} more` : '');
}

/**
 * 422 for a failed validation: `field` is the FIRST issue's dotted path, `message` names every
 * issue (up to 20) so that one round trip tells a client everything that is wrong.
 */
export function validationFailed(issues: readonly ValidationIssue[]): HttpError {
  const first = issues[0];
  return new HttpError(422, 'validation_error', describeIssues(issues), first?.path ? first.path : undefined);
}

/** Where a log line goes (stderr in `govctl serve`); one JSON object per call, no newline. */
export type LogLine = (line: string) => void;

/** The status and code for an error Fastify itself raised (body parsing, routing). */
function frameworkError(error: FastifyError, request: FastifyRequest): HttpError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HttpError(413, 'payload_too_large', `the request body is larger than ${request.routeOptions.bodyLimit ?? 'the limit of'} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // wire.md §5: a wrong content type is a bad request (400), not 415.
      return badRequest('the request body must be JSON with Content-Type: application/json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return badRequest('the Content-Length header does not match the body');
    case 'FST_ERR_BAD_URL':
      return badRequest('the URL is not valid (malformed percent-encoding)');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return notFound('no such resource');
    default:
      break;
  }
  const status = error.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return null;
  // Other client errors Fastify raises (an aborted upload, a malformed request): keep the status, say bad_request.
  if (status === 404) return notFound('no such resource');
  if (status === 413) return new HttpError(413, 'payload_too_large', 'the request body is too large');
  return new HttpError(status, 'bad_request', 'the request could not be read');
}

/** Turns any error into the response the client sees. */
export function toHttpError(error: unknown, request: FastifyRequest): HttpError | null {
  if (error instanceof HttpError) return error;
  // A write that could not be made durable: never a 2xx, and not a bug of the request either.
  if (error instanceof DatabaseFileChangedError) return new HttpError(503, 'service_unavailable', error.message);
  if (error instanceof DatabaseUnavailableError) {
    const write = request.method !== 'GET' && request.method !== 'HEAD';
    return new HttpError(503, 'service_unavailable', `the database is unavailable; ${write ? 'nothing was stored, ' : ''}retry later`);
  }
  if (error instanceof UnstorableValueError) return new HttpError(422, 'validation_error', error.message);
  if (error && typeof error === 'object' && 'code' in error) return frameworkError(error as FastifyError, request);
  return null;
}

/** How often, at most, the log says the database is unavailable while it stays so. */
const UNAVAILABLE_LOG_EVERY_MS = 10_000;

/**
 * The application's one error handler. Known errors are answered as they are; anything else is
 * a 500 `server_error` with a generic message, and its cause is logged with the request id. A
 * database that went away is logged too (a warning, at most every 10 s, with the driver's reason),
 * so that an operator reading the log sees why requests get 503.
 */
export function createErrorHandler(logLine: LogLine, nowMs: () => number = Date.now) {
  let lastUnavailableLog = -Infinity;
  return function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
    // A refusal before the body was read (401, 404, 413, 429, …) closes the connection unread.
    closeWithoutReadingBody(request.raw, reply.raw);
    if (error instanceof DatabaseUnavailableError && nowMs() - lastUnavailableLog >= UNAVAILABLE_LOG_EVERY_MS) {
      lastUnavailableLog = nowMs();
      const cause = error.cause instanceof Error ? error.cause.message : error.message;
      logLine(
        JSON.stringify({ level: 'warn', time: new Date(lastUnavailableLog).toISOString(), request_id: request.id, msg: 'database unavailable', reason: cause }),
      );
    }
    const known = toHttpError(error, request);
    if (known) {
      if (known.headers) void reply.headers(known.headers);
      void reply.code(known.statusCode).send(known.body());
      return;
    }
    logLine(
      JSON.stringify({
        level: 'error',
        time: new Date().toISOString(),
        request_id: request.id,
        msg: 'unhandled error',
        error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error),
      }),
    );
    const body: ErrorBody = { error: 'server_error', message: `internal error; the service log has the details under request id ${request.id}` };
    void reply.code(500).send(body);
  };
}
