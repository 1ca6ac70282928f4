/**
 * The retry policy (docs/library.md "Settings"), pure so that each rule is tested on its own:
 *
 * 1. 429: wait for `Retry-After` (delta-seconds or an HTTP date; missing or unreadable → 1 s;
 *    capped, 60 s by default), then retry once. A 429 means the request was not applied, so a
 *    retry is safe for every endpoint.
 * 2. 5xx: not retried; the request may have been applied.
 * 3. Network errors and timeouts: not retried, for the same reason.
 * 4. Except an idempotent write (one that carries an idempotency key, docs/service.md): after a
 *    5xx, a network error or a timeout it is sent again once, after `Retry-After` when a 503 gives
 *    one (capped) and 1 s otherwise. If the first attempt was applied, the service answers the
 *    repeat with the first result and stores nothing, so the retry cannot store a record twice.
 */

/** Settings of the retry policy. */
export interface RetryPolicy {
  /** retries after a 429; the specification says once (default 1) */
  readonly maxRateLimitRetries: number;
  /** longest wait for a `Retry-After`, in ms (default 60 000) */
  readonly maxWaitMs: number;
  /** wait when a 429 has no readable `Retry-After`, in ms (default 1 000) */
  readonly defaultWaitMs: number;
  /** retries of an idempotent write after a 5xx, network error or timeout (default 1) */
  readonly maxIdempotentRetries: number;
}

/** The library's policy: retry a 429 once, wait at most 60 s, 1 s when the service does not say. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ maxRateLimitRetries: 1, maxWaitMs: 60_000, defaultWaitMs: 1_000, maxIdempotentRetries: 1 });

/** How an attempt ended, as far as the policy cares. */
export type AttemptOutcome = { kind: 'response'; status: number; retryAfter?: string | undefined } | { kind: 'network-error' };

export type RetryDecision = { retry: true; waitMs: number } | { retry: false };

/**
 * Reads a `Retry-After` header value (RFC 9110 §10.2.3): delta-seconds or an HTTP date.
 * Returns ms to wait (0 for a date in the past), or undefined when the value is missing or unreadable.
 *
 * @example parseRetryAfter('2') // 2000
 * @example parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', new Date('2015-10-21T07:27:58Z')) // 2000
 */
export function parseRetryAfter(value: string | undefined, now: Date = new Date()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date always names the weekday and GMT; Date.parse alone would also take "1" or "2026".
  if (!/^[A-Za-z]{3},? .*GMT$/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now.getTime());
}

/**
 * Whether to try again after attempt number `attempt` (1-based) ended with `outcome`, and how long to wait first.
 *
 * @example decideRetry(1, { kind: 'response', status: 429, retryAfter: '2' }) // { retry: true, waitMs: 2000 }
 * @example decideRetry(2, { kind: 'response', status: 429, retryAfter: '2' }) // { retry: false }
 * @example decideRetry(1, { kind: 'response', status: 503 }) // { retry: false }
 */
export function decideRetry(attempt: number, outcome: AttemptOutcome, policy: RetryPolicy = DEFAULT_RETRY_POLICY, now: Date = new Date()): RetryDecision {
  if (outcome.kind !== 'response' || outcome.status !== 429) return { retry: false };
  if (attempt > policy.maxRateLimitRetries) return { retry: false };
  return { retry: true, waitMs: rateLimitWait(outcome.retryAfter, policy, now) };
}

/**
 * Rule 4: whether to send an idempotent write again after its `failure`-th failed attempt (1-based)
 * ended in a 5xx, a network error or a timeout. Anything else (a 4xx, a 2xx, a request that is not
 * idempotent) is never retried by this rule; 429 is rule 1's.
 *
 * @example decideFailureRetry(1, { kind: 'network-error' }, true) // { retry: true, waitMs: 1000 }
 * @example decideFailureRetry(1, { kind: 'network-error' }, false) // { retry: false }
 * @example decideFailureRetry(2, { kind: 'response', status: 500 }, true) // { retry: false }
 */
export function decideFailureRetry(
  failure: number,
  outcome: AttemptOutcome,
  idempotent: boolean,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  now: Date = new Date(),
): RetryDecision {
  if (!idempotent || failure > policy.maxIdempotentRetries) return { retry: false };
  if (outcome.kind === 'network-error') return { retry: true, waitMs: policy.defaultWaitMs };
  if (outcome.status < 500 || outcome.status > 599) return { retry: false };
  return { retry: true, waitMs: rateLimitWait(outcome.status === 503 ? outcome.retryAfter : undefined, policy, now) };
}

/** The wait a 429 asks for: its `Retry-After`, or the default when unreadable, never above the cap. */
export function rateLimitWait(retryAfter: string | undefined, policy: RetryPolicy = DEFAULT_RETRY_POLICY, now: Date = new Date()): number {
  const asked = parseRetryAfter(retryAfter, now) ?? policy.defaultWaitMs;
  return Math.min(asked, policy.maxWaitMs);
}

/**
 * The default sleep: a plain timer (it keeps the process alive, as the request it delays does).
 * With a signal, the wait ends early when it aborts (and rejects with the signal's reason).
 */
export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    if (ms <= 0) {
      resolve();
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
