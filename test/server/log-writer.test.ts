/**
 * The request log writer of `govctl serve` (server/log-writer.ts): every line, in order, the first
 * after a quiet spell on the next turn, then at most one write per LOG_FLUSH_MS while lines keep
 * coming, and flush() at once.
 */
import { describe, expect, it } from 'vitest';
import { createLogWriter, LOG_FLUSH_MS } from '../../src/server/index.js';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('createLogWriter', () => {
  it('writes the first line on the next turn and flush() at once', async () => {
    const writes: string[] = [];
    const log = createLogWriter((text) => writes.push(text));
    log.line('a');
    log.line('b');
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toEqual(['a\nb\n']);
    log.line('c');
    log.flush();
    expect(writes).toEqual(['a\nb\n', 'c\n']);
    log.flush(); // nothing gathered: no empty write
    expect(writes).toHaveLength(2);
  });

  it('writes at most once per LOG_FLUSH_MS while lines keep coming, losing none and keeping their order', async () => {
    const writes: string[] = [];
    const log = createLogWriter((text) => writes.push(text));
    const started = performance.now();
    let n = 0;
    while (performance.now() - started < 10 * LOG_FLUSH_MS) {
      log.line(`line ${n++}`);
      await nextTurn();
    }
    await sleep(LOG_FLUSH_MS + 10);
    const elapsed = performance.now() - started;
    expect(writes.join('')).toBe(Array.from({ length: n }, (_, i) => `line ${i}\n`).join(''));
    expect(n).toBeGreaterThan(writes.length * 3); // gathered, not a write per turn
    expect(writes.length).toBeLessThanOrEqual(Math.ceil(elapsed / LOG_FLUSH_MS) + 1);
  });

  it('writes nothing after flush() until the next line', async () => {
    const writes: string[] = [];
    const log = createLogWriter((text) => writes.push(text));
    log.line('x');
    log.flush();
    await sleep(LOG_FLUSH_MS + 10);
    expect(writes).toEqual(['x\n']);
  });
});
