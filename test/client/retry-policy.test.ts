import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, decideRetry, parseRetryAfter, rateLimitWait } from '../../src/client/retry.js';

const now = new Date('2026-03-01T12:00:00Z');

describe('Retry-After', () => {
  it('reads delta-seconds as ms', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter(' 7 ', now)).toBe(7000);
  });

  it('reads an HTTP date as the time left until it', () => {
    expect(parseRetryAfter('Sun, 01 Mar 2026 12:00:03 GMT', now)).toBe(3000);
  });

  it('reads an HTTP date in the past as no wait', () => {
    expect(parseRetryAfter('Sun, 01 Mar 2026 11:59:00 GMT', now)).toBe(0);
  });

  it('gives undefined for a missing or unreadable value', () => {
    for (const value of [undefined, '', 'soon', '-1', '1.5', 'Sun, 99 Foo 2026 GMT']) expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe('the wait after a 429', () => {
  it('is the Retry-After', () => {
    expect(rateLimitWait('3', DEFAULT_RETRY_POLICY, now)).toBe(3000);
  });

  it('is 1 s when Retry-After is missing or garbage', () => {
    expect(rateLimitWait(undefined, DEFAULT_RETRY_POLICY, now)).toBe(1000);
    expect(rateLimitWait('whenever', DEFAULT_RETRY_POLICY, now)).toBe(1000);
  });

  it('is capped at 60 s by default', () => {
    expect(rateLimitWait('3600', DEFAULT_RETRY_POLICY, now)).toBe(60_000);
  });

  it('is capped at the policy cap when one is given', () => {
    expect(rateLimitWait('10', { ...DEFAULT_RETRY_POLICY, maxWaitMs: 5000 }, now)).toBe(5000);
  });
});

describe('decideRetry', () => {
  it('retries the first 429 after its Retry-After', () => {
    expect(decideRetry(1, { kind: 'response', status: 429, retryAfter: '2' }, DEFAULT_RETRY_POLICY, now)).toEqual({ retry: true, waitMs: 2000 });
  });

  it('retries a 429 only once', () => {
    expect(decideRetry(2, { kind: 'response', status: 429, retryAfter: '2' }, DEFAULT_RETRY_POLICY, now)).toEqual({ retry: false });
  });

  it('never retries a 5xx', () => {
    for (const status of [500, 502, 503, 504]) expect(decideRetry(1, { kind: 'response', status }, DEFAULT_RETRY_POLICY, now)).toEqual({ retry: false });
  });

  it('never retries a network error or timeout (a POST may have been applied)', () => {
    expect(decideRetry(1, { kind: 'network-error' }, DEFAULT_RETRY_POLICY, now)).toEqual({ retry: false });
  });

  it('never retries other statuses', () => {
    for (const status of [200, 400, 401, 403, 404, 422])
      expect(decideRetry(1, { kind: 'response', status }, DEFAULT_RETRY_POLICY, now)).toEqual({ retry: false });
  });

  it('retries as often as the policy says', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, maxRateLimitRetries: 0 };
    expect(decideRetry(1, { kind: 'response', status: 429 }, policy, now)).toEqual({ retry: false });
  });
});
