/**
 * The request log of a running service (`govctl serve`): one line per request, gathered and
 * written in one write. The first line after a quiet spell goes out on the next turn of the event
 * loop; while lines keep coming, writes are at most every {@link LOG_FLUSH_MS}, since a write per
 * turn cost about 2 % of a small request under load. `flush()` writes what is gathered at once
 * (before the service prints anything else, and when it stops), so nothing is lost on a clean exit.
 */

/** Longest a log line waits while lines keep coming. */
export const LOG_FLUSH_MS = 20;

export interface LogWriter {
  /** Gathers one line (without its newline). */
  line(text: string): void;
  /** Writes every gathered line now. */
  flush(): void;
}

/**
 * The time source and scheduler of a log writer; tests pass a manual one so that nothing waits on
 * the wall clock.
 */
export interface LogClock {
  /** milliseconds, monotonic */
  now(): number;
  /** Runs `fn` after `ms` (0: on the next turn of the event loop); returns a function that cancels it. */
  later(fn: () => void, ms: number): () => void;
}

/** The event loop's clock: `performance.now()`, `setImmediate` and unref'd timers. */
export const EVENT_LOOP_CLOCK: LogClock = {
  now: () => performance.now(),
  later(fn, ms) {
    if (ms <= 0) {
      const immediate = setImmediate(fn);
      return () => clearImmediate(immediate);
    }
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/**
 * @param write receives whole lines, each ending in a newline, in order
 * @example
 * const log = createLogWriter((text) => process.stderr.write(text));
 * await startServer({ db, logLine: log.line });
 */
export function createLogWriter(write: (text: string) => void, flushMs: number = LOG_FLUSH_MS, clock: LogClock = EVENT_LOOP_CLOCK): LogWriter {
  let queued = '';
  let cancel: (() => void) | null = null;
  let lastWriteAt = -Infinity;

  function flush(): void {
    if (cancel !== null) cancel();
    cancel = null;
    if (queued === '') return;
    const text = queued;
    queued = '';
    lastWriteAt = clock.now();
    write(text);
  }

  return {
    line(text: string): void {
      queued += `${text}\n`;
      if (cancel !== null) return;
      cancel = clock.later(flush, Math.max(0, lastWriteAt + flushMs - clock.now()));
    },
    flush,
  };
}
