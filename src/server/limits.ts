/**
 * The service's limits in one place (docs/security.md, "Abusive clients"): the per-workspace
 * budgets, the connection caps and timeouts, and their defaults. `govctl serve` has a flag for each;
 * createApp/startServer take them as options.
 */

export interface ServiceLimits {
  /** requests per minute per workspace (docs/service.md "Limits") */
  requestsPerMinute: number;
  /** records per minute per workspace: every item of a batch, every single-record write */
  recordsPerMinute: number;
  /** open connections at once; further ones are closed as they arrive */
  maxConnections: number;
  /** longest a client may take to send a request's headers */
  headersTimeoutMs: number;
  /** longest a client may take to send a whole request, headers and body */
  requestTimeoutMs: number;
  /** how long an idle keep-alive connection stays open */
  keepAliveTimeoutMs: number;
  /** a connection with neither reading nor writing for this long is closed (a client that stops reading its replies) */
  idleTimeoutMs: number;
  /** requests served on one connection before it is closed (0: no limit) */
  maxRequestsPerSocket: number;
  /** requests a connection may have waiting behind the one being answered before the service stops reading from it */
  maxPipelined: number;
  /** reply bytes queued in the service for one connection before it stops reading that connection's next request */
  maxQueuedReplyBytes: number;
}

/**
 * The defaults. The record budget (10 000 a second) is above the fastest honest import measured on
 * this code (`govctl evidence import`, ~6 400 records/s) and about half of what the service can
 * check in signatures on two cores, so one workspace at full budget leaves the rest to the others.
 */
export const DEFAULT_LIMITS: Readonly<ServiceLimits> = Object.freeze({
  requestsPerMinute: 2000,
  recordsPerMinute: 600_000,
  maxConnections: 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  idleTimeoutMs: 120_000,
  maxRequestsPerSocket: 0,
  maxPipelined: 16,
  maxQueuedReplyBytes: 1024 * 1024,
});

/** The defaults with `overrides` applied (undefined members keep their default). */
export function resolveLimits(overrides: Partial<ServiceLimits> = {}): ServiceLimits {
  const limits: ServiceLimits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(overrides) as (keyof ServiceLimits)[]) {
    const value = overrides[key];
    if (value !== undefined) limits[key] = value;
  }
  return limits;
}

/**
 * Takes turns for work that holds the event loop for long (a batch of records, a large body):
 * at most one such piece of work starts per turn of the event loop, so the requests of other
 * clients that arrive meanwhile are read and answered between two batches, not after all of them.
 * Each turn is a `setImmediate`, which Node runs after polling for I/O.
 */
export class TurnTaker {
  readonly #waiting: (() => void)[] = [];
  #armed = false;

  /** Resolves in a turn of its own, after the work that asked before it. */
  take(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      this.#arm();
    });
  }

  #arm(): void {
    if (this.#armed) return;
    this.#armed = true;
    setImmediate(() => {
      this.#armed = false;
      const next = this.#waiting.shift();
      if (this.#waiting.length > 0) this.#arm();
      next?.();
    });
  }
}
