/**
 * The request log writer of `govctl serve` (server/log-writer.ts): every line, in order, the first
 * after a quiet spell on the next turn, then at most one write per LOG_FLUSH_MS while lines keep
 * coming, and flush() at once. Driven by a manual clock: nothing here waits on the wall clock.
 */
import { describe, expect, it } from 'vitest';
import { createLogWriter, LOG_FLUSH_MS, type LogClock } from '../../src/server/log-writer.js';

/** A clock whose time moves only when the test says; `turn()` runs what is due now. */
function manualClock() {
  let nowMs = 0;
  let pending: { at: number; fn: () => void; live: boolean }[] = [];
  const clock: LogClock = {
    now: () => nowMs,
    later(fn, ms) {
      const entry = { at: nowMs + ms, fn, live: true };
      pending.push(entry);
      return () => {
        entry.live = false;
      };
    },
  };
  function turn(): void {
    const due = pending.filter((entry) => entry.live && entry.at <= nowMs);
    pending = pending.filter((entry) => entry.live && entry.at > nowMs);
    for (const entry of due) entry.fn();
  }
  return {
    clock,
    turn,
    /** moves time by `ms`, then runs what is due */
    advance(ms: number) {
      nowMs += ms;
      turn();
    },
    get scheduled() {
      return pending.filter((entry) => entry.live).length;
    },
  };
}

describe('createLogWriter', () => {
  it('writes the first line on the next turn and flush() at once', () => {
    const time = manualClock();
    const writes: string[] = [];
    const log = createLogWriter((text) => writes.push(text), LOG_FLUSH_MS, time.clock);
    log.line('a');
    log.line('b');
    expect(writes).toEqual([]);
    time.turn();
    expect(writes).toEqual(['a\nb\n']);
    log.line('c');
    log.flush();
    expect(writes).toEqual(['a\nb\n', 'c\n']);
    log.flush(); // nothing gathered: no empty write
    expect(writes).toHaveLength(2);
    expect(time.scheduled).toBe(0); // flush cancelled the pending write
  });

  it('writes at most once per LOG_FLUSH_MS while lines keep coming, losing none and keeping their order', () => {
    const time = manualClock();
    const writes: { at: number; text: string }[] = [];
    const log = createLogWriter((text) => writes.push({ at: time.clock.now(), text }), LOG_FLUSH_MS, time.clock);
    let n = 0;
    // a line every millisecond for 10 flush periods
    for (let ms = 0; ms < 10 * LOG_FLUSH_MS; ms++) {
      log.line(`line ${n++}`);
      time.advance(1);
    }
    time.advance(LOG_FLUSH_MS);
    expect(writes.map((w) => w.text).join('')).toBe(Array.from({ length: n }, (_, i) => `line ${i}\n`).join(''));
    for (let i = 1; i < writes.length; i++) expect(writes[i].at - writes[i - 1].at).toBeGreaterThanOrEqual(LOG_FLUSH_MS);
    expect(writes.length).toBeLessThanOrEqual(11);
    expect(writes.length).toBeGreaterThanOrEqual(10);
  });

  it('after a quiet spell the next line goes out on the next turn again', () => {
    const time = manualClock();
    const writes: string[] = [];
    const log = createLogWriter((text) => writes.push(text), LOG_FLUSH_MS, time.clock);
    log.line('first');
    time.turn();
    log.line('soon after'); // within LOG_FLUSH_MS of the last write: waits
    time.advance(LOG_FLUSH_MS - 1);
    expect(writes).toEqual(['first\n']);
    time.advance(1);
    expect(writes).toEqual(['first\n', 'soon after\n']);
    time.advance(5 * LOG_FLUSH_MS);
    log.line('after a quiet spell');
    time.turn();
    expect(writes).toEqual(['first\n', 'soon after\n', 'after a quiet spell\n']);
  });

  it('writes nothing after flush() until the next line', () => {
    const time = manualClock();
    const writes: string[] = [];
    const log = createLogWriter((text) => writes.push(text), LOG_FLUSH_MS, time.clock);
    log.line('x');
    log.flush();
    time.advance(LOG_FLUSH_MS + 10);
    expect(writes).toEqual(['x\n']);
  });
});
