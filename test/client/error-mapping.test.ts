import { describe, expect, it } from 'vitest';
import { inspect } from 'node:util';
import {
  AttestationError,
  ConfigError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  UnauthorizedError,
  ValidationError,
  errorFromResponse,
  redact,
  withMessage,
} from '../../src/client/errors.js';

const context = { request: 'POST /api/workspaces/ws_1/governance/grc/evidence' };
const body = (error: string, message: string, field?: string) => JSON.stringify({ error, message, ...(field ? { field } : {}) });

describe('errorFromResponse maps a status to one error class', () => {
  it.each([
    [400, 'bad_request', ValidationError],
    [413, 'payload_too_large', ValidationError],
    [422, 'validation_error', ValidationError],
    [409, 'http_error', ValidationError],
    [401, 'unauthorized', UnauthorizedError],
    [403, 'forbidden', UnauthorizedError],
    [404, 'not_found', NotFoundError],
    [429, 'rate_limited', RateLimitedError],
    [500, 'server_error', ServerError],
    [503, 'server_error', ServerError],
  ])('%i → %s', (status, code, errorClass) => {
    const error = errorFromResponse(status, 'not json at all', context);
    expect(error).toBeInstanceOf(errorClass);
    expect(error).toBeInstanceOf(AttestationError);
    expect(error.status).toBe(status);
    expect(error.code).toBe(code);
  });

  it("keeps the service's service_unavailable (503: retry later) apart from a bug's server_error", () => {
    const error = errorFromResponse(503, body('service_unavailable', 'the database is unavailable; nothing was stored, retry later'), context);
    expect(error).toBeInstanceOf(ServerError);
    expect(error.code).toBe('service_unavailable');
  });

  it('takes code, message and field from the service error body', () => {
    const error = errorFromResponse(422, body('validation_error', 'must be one of: high, limited', 'payload.risk_level'), context);
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.code).toBe('validation_error');
    expect(error.field).toBe('payload.risk_level');
    expect(error.message).toContain('must be one of: high, limited');
    expect(error.message).toContain('payload.risk_level');
  });

  it('classifies by status, not by the text: a 401 that says "not found" is still unauthorized', () => {
    expect(errorFromResponse(401, body('not_found', 'not found'), context)).toBeInstanceOf(UnauthorizedError);
  });

  it('keeps the Retry-After of a 429', () => {
    const error = errorFromResponse(429, body('rate_limited', 'slow down'), { ...context, retryAfterMs: 2000 });
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterMs).toBe(2000);
  });

  it('maps a 3xx to NetworkError (not a reply of the service)', () => {
    const error = errorFromResponse(302, '', context);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.code).toBe('malformed_response');
  });

  it('never repeats the API key, even when the service echoes it', () => {
    const key = 'gk_live_abcdef0123456789';
    const error = errorFromResponse(401, body('unauthorized', `key ${key} is revoked`), { ...context, secrets: [key] });
    expect(error.message).not.toContain(key);
    expect(error.message).toContain('***');
  });

  it('never carries the API key in the request id or request line, where a hostile service could echo it', () => {
    const key = 'gk_live_abcdef0123456789';
    for (const status of [401, 500, 302]) {
      const error = errorFromResponse(status, body('server_error', 'boom'), {
        request: `POST /api/workspaces/${key}/governance/grc/evidence`,
        requestId: `Bearer ${key}`,
        secrets: [key],
      });
      expect(error.requestId ?? '').not.toContain(key);
      expect(inspect(error)).not.toContain(key);
      expect(String(error)).not.toContain(key);
    }
  });

  it('carries the request id', () => {
    expect(errorFromResponse(500, body('server_error', 'boom'), { ...context, requestId: 'req-9' }).requestId).toBe('req-9');
  });
});

describe('error helpers', () => {
  it('redact replaces each secret', () => {
    expect(redact('a secret1 b secret1 c secret2', ['secret1', 'secret2', undefined])).toBe('a *** b *** c ***');
  });

  it('withMessage keeps class, code and flags and links the original as cause', () => {
    const original = new NetworkError('timeout', 'no reply', { timedOut: true, status: undefined });
    const copy = withMessage(original, '3 lost: no reply');
    expect(copy).toBeInstanceOf(NetworkError);
    expect(copy.timedOut).toBe(true);
    expect(copy.code).toBe('timeout');
    expect(copy.message).toBe('3 lost: no reply');
    expect(copy.cause).toBe(original);
  });

  it('ValidationError.fromIssues lists every issue and names the first field', () => {
    const error = ValidationError.fromIssues('model_evaluation record', [
      { path: 'payload.accuracy', code: 'type', message: 'must be a number' },
      { path: 'payload.evaluated_by', code: 'required', message: 'is required' },
    ]);
    expect(error.issues).toHaveLength(2);
    expect(error.field).toBe('payload.accuracy');
    expect(error.message).toBe('model_evaluation record is invalid: payload.accuracy must be a number; payload.evaluated_by is required');
  });

  it('ConfigError defaults its code to config_error', () => {
    expect(new ConfigError('x').code).toBe('config_error');
  });
});
