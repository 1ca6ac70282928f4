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
 * @param write receives whole lines, each ending in a newline, in order
 * @example
 * const log = createLogWriter((text) => process.stderr.write(text));
 * await startServer({ db, logLine: log.line });
 */
export function createLogWriter(write: (text: string) => void, flushMs: number = LOG_FLUSH_MS): LogWriter {
  let queued = '';
  let immediate: NodeJS.Immediate | null = null;
  let timer: NodeJS.Timeout | null = null;
  let lastWriteAt = -Infinity;

  function flush(): void {
    if (immediate !== null) clearImmediate(immediate);
    if (timer !== null) clearTimeout(timer);
    immediate = null;
    timer = null;
    if (queued === '') return;
    const text = queued;
    queued = '';
    lastWriteAt = performance.now();
    write(text);
  }

  return {
    line(text: string): void {
      queued += `${text}\n`;
      if (immediate !== null || timer !== null) return;
      const wait = lastWriteAt + flushMs - performance.now();
      if (wait <= 0) {
        immediate = setImmediate(flush);
      } else {
        timer = setTimeout(flush, wait);
        timer.unref();
      }
    },
    flush,
  };
}
