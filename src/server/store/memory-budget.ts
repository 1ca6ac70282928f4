/**
 * A workspace's request and record budget counted in this process's memory: exact for a backend
 * whose every request is served by one process (SQLite, whose database one `govctl serve` holds).
 * A backend with replicas counts in its database instead (store.ts, BudgetStore).
 */
import type { BudgetState } from './store.js';

/** The rate limit's window: one minute (docs/service.md "Limits", "per minute"). */
export const RATE_LIMIT_WINDOW_MS = 60_000;

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

  constructor(readonly windowMs: number = RATE_LIMIT_WINDOW_MS) {}

  /** Counts one request for `key` at `nowMs`, against `max` requests a window. */
  hit(key: string, max: number, nowMs: number): BudgetState {
    const window = this.#windowAt(key, nowMs);
    window.count += 1;
    const count = window.count;
    return {
      exceeded: count > max,
      remaining: count >= max ? 0 : max - count,
      resetSeconds: Math.ceil((this.windowMs - (nowMs - window.startMs)) / 1000),
    };
  }

  /**
   * Charges `n` records to `key`'s current window (started by the request that carries them).
   * A charge that would go over `maxRecords` is refused whole and charges nothing, so a client
   * that splits its batch can still spend what is left.
   */
  chargeRecords(key: string, n: number, maxRecords: number, nowMs: number): BudgetState {
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
