/**
 * The attestation batch buffer's own timing (src/client/batch-buffer.ts): it flushes by itself
 * once batchFlushInterval has passed since the first buffered record, at once when batchMaxSize
 * are buffered (cancelling the wait), and never after stop(). Driven by a manual timer: nothing
 * here waits on the wall clock.
 */
import { describe, expect, it } from 'vitest';
import type { AttestationRecord } from '../../src/core/attestations.js';
import { AttestationError } from '../../src/client/errors.js';
import { BatchBuffer, type FlushReport } from '../../src/client/batch-buffer.js';
import { manualTimer } from '../helpers/manual-timer.js';

const record = (n: number) => ({ tool_name: `tool-${n}` }) as unknown as AttestationRecord;

function buffer(maxSize: number, flushIntervalMs: number) {
  const time = manualTimer();
  const sent: number[][] = [];
  const autoFlushes: FlushReport[] = [];
  const instance = new BatchBuffer({
    maxSize,
    flushIntervalMs,
    timer: time.timer,
    async send(records) {
      sent.push(records.map((r) => Number(String((r as unknown as { tool_name: string }).tool_name).slice(5))));
      return { accepted: records.length, rejected: 0, results: records.map(() => ({ status: 'accepted', attestation_id: 'att_x' })) };
    },
    onAutoFlush: (report) => autoFlushes.push(report),
    toError: (error) => new AttestationError('network_error', String(error)),
  });
  return { instance, time, sent, autoFlushes };
}

/** Lets the flush the buffer started run to its end (its send is a resolved promise). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('BatchBuffer', () => {
  it('flushes by itself once flushIntervalMs has passed since the first buffered record, not before', async () => {
    const { instance, time, sent, autoFlushes } = buffer(100, 150);
    instance.add(record(1));
    instance.add(record(2));
    // One wait, armed by the first record, of the interval.
    expect(time.waiting()).toEqual([150]);
    await settle();
    expect(sent).toEqual([]);
    expect(instance.pending).toBe(2);

    time.fire();
    await settle();
    expect(sent).toEqual([[1, 2]]);
    expect(autoFlushes.map((report) => report.accepted)).toEqual([2]);

    // The next record starts the next interval.
    instance.add(record(3));
    expect(time.waiting()).toEqual([150]);
    time.fire();
    await settle();
    expect(sent).toEqual([[1, 2], [3]]);
  });

  it('flushes at once when maxSize records are buffered, and cancels the interval wait', async () => {
    const { instance, time, sent } = buffer(3, 60_000);
    instance.add(record(1));
    instance.add(record(2));
    expect(time.waiting()).toEqual([60_000]);
    instance.add(record(3));
    expect(time.waiting()).toEqual([]);
    await settle();
    expect(sent).toEqual([[1, 2, 3]]);
  });

  it('sends nothing by itself after stop(): the records stay buffered for an explicit flush', async () => {
    const { instance, time, sent } = buffer(100, 150);
    instance.add(record(1));
    instance.stop();
    expect(time.waiting()).toEqual([]);
    await settle();
    expect(sent).toEqual([]);
    expect((await instance.flush()).accepted).toBe(1);
    expect(sent).toEqual([[1]]);
  });
});
