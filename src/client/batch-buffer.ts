/**
 * The attestation batch buffer (docs/library.md "batch and the buffer": settings batchMaxSize / batchFlushInterval): records
 * wait here until `maxSize` of them are buffered or `flushIntervalMs` has passed since the first
 * one came in, then go out through the batch endpoint in chunks of at most `maxSize`.
 *
 * Flushes run one after another, in order. A flush never throws: it reports what was sent,
 * accepted, rejected and lost, and why, and the client decides (by its onError mode) what to say.
 * The buffer retries nothing itself: a batch POST that failed may have been applied. A chunk whose
 * items carry idempotency keys (the client's default) is retried once by the API's keyed-write rule
 * (retry.ts), which cannot store an item twice.
 */
import type { AttestationRecord } from '../core/attestations.js';
import type { AttestationError } from './errors.js';
import type { BatchResultBody } from './wire-types.js';

/** One item of a flushed batch, in camelCase. */
export interface BatchItem {
  /** `accepted` for a stored attestation */
  status: string;
  /** `att_…`, or '' when the item was not stored */
  attestationId: string;
  /** why the service rejected the item, when it said */
  reason?: string;
}

/**
 * What a flush did. `lost` counts records that were not delivered (why: `errors`, one per failed
 * chunk); `rejected` counts records the service refused (why: the items' `reason`).
 */
export interface FlushReport {
  /** records handed to the batch endpoint */
  sent: number;
  accepted: number;
  rejected: number;
  /** records not delivered: their chunk failed, or a chunk before it did */
  lost: number;
  results: BatchItem[];
  /** why records were lost, one error per failed chunk */
  errors: AttestationError[];
}

export interface BatchBufferOptions {
  maxSize: number;
  flushIntervalMs: number;
  /** signs and posts one chunk (at most maxSize records) */
  send: (records: AttestationRecord[]) => Promise<BatchResultBody>;
  /** hears the report of a flush the buffer started itself (size reached, interval passed) */
  onAutoFlush: (report: FlushReport) => void;
  /** turns whatever `send` threw into an AttestationError */
  toError: (error: unknown) => AttestationError;
  /**
   * Schedules the interval flush (`later` returns a function that cancels it); default: an unref'd
   * timer. Tests pass a manual one so that they decide when the interval has passed.
   */
  timer?: FlushTimer;
}

/** Schedules one call of `fn` after `ms`; returns a function that cancels it. */
export interface FlushTimer {
  later(fn: () => void, ms: number): () => void;
}

/** The event loop's timers, unref'd: the timer must not keep the process alive (at exit, the beforeExit hook flushes instead). */
const UNREF_TIMER: FlushTimer = {
  later(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

export function emptyReport(): FlushReport {
  return { sent: 0, accepted: 0, rejected: 0, lost: 0, results: [], errors: [] };
}

/** One report of several flushes, in order: counts added, results and errors concatenated. */
export function mergeReports(reports: readonly FlushReport[]): FlushReport {
  const merged = emptyReport();
  for (const report of reports) {
    merged.sent += report.sent;
    merged.accepted += report.accepted;
    merged.rejected += report.rejected;
    merged.lost += report.lost;
    merged.results.push(...report.results);
    merged.errors.push(...report.errors);
  }
  return merged;
}

/** Buffers attestation records and flushes them in batches. */
export class BatchBuffer {
  readonly #options: BatchBufferOptions;
  #records: AttestationRecord[] = [];
  /** cancels the armed interval flush */
  #timer: (() => void) | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #inFlight = 0;

  constructor(options: BatchBufferOptions) {
    this.#options = options;
  }

  /** Records waiting to be flushed, plus records in a flush that has not finished. */
  get pending(): number {
    return this.#records.length + this.#inFlight;
  }

  /** Buffers a record; starts a flush when maxSize are buffered, else arms the interval timer. */
  add(record: AttestationRecord): void {
    this.#records.push(record);
    if (this.#records.length >= this.#options.maxSize) {
      this.#clearTimer();
      void this.flush().then(this.#options.onAutoFlush);
    } else if (this.#timer === undefined) {
      this.#timer = (this.#options.timer ?? UNREF_TIMER).later(() => {
        this.#timer = undefined;
        void this.flush().then(this.#options.onAutoFlush);
      }, this.#options.flushIntervalMs);
    }
  }

  /**
   * Sends everything buffered at this moment (records added later wait for the next flush), after
   * any flush already running. Never throws.
   */
  flush(): Promise<FlushReport> {
    this.#clearTimer();
    const records = this.#records;
    this.#records = [];
    this.#inFlight += records.length;
    const run = this.#queue
      .then(() => this.#send(records))
      .finally(() => {
        this.#inFlight -= records.length;
      });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Stops the interval timer (records stay buffered). */
  stop(): void {
    this.#clearTimer();
  }

  #clearTimer(): void {
    this.#timer?.();
    this.#timer = undefined;
  }

  async #send(records: AttestationRecord[]): Promise<FlushReport> {
    const report = emptyReport();
    const size = this.#options.maxSize;
    // A flush holds at most maxSize records (the buffer flushes when it reaches that), but the
    // endpoint's limit is kept here too rather than assumed of the caller.
    for (let start = 0; start < records.length; start += size) {
      const chunk = records.slice(start, start + size);
      try {
        const reply = await this.#options.send(chunk);
        report.sent += chunk.length;
        addReply(report, reply, chunk.length);
      } catch (error) {
        // Whatever failed this chunk (unreachable, failing, rate-limited) would fail the rest, slowly.
        report.errors.push(this.#options.toError(error));
        report.lost += records.length - start;
        break;
      }
    }
    return report;
  }
}

function addReply(report: FlushReport, reply: BatchResultBody, count: number): void {
  const results = Array.isArray(reply.results) ? reply.results : [];
  const accepted = typeof reply.accepted === 'number' ? reply.accepted : results.filter((item) => item.status === 'accepted').length;
  const rejected = typeof reply.rejected === 'number' ? reply.rejected : count - accepted;
  report.accepted += accepted;
  report.rejected += rejected;
  for (const item of results) {
    const result: BatchItem = { status: String(item.status), attestationId: typeof item.attestation_id === 'string' ? item.attestation_id : '' };
    const reason = item.message ?? item.error;
    if (item.status !== 'accepted' && typeof reason === 'string') result.reason = item.field ? `${item.field}: ${reason}` : reason;
    report.results.push(result);
  }
}
