/**
 * How a replica gathers work for one round trip to the database: items added while a batch is
 * being handled, or in the same turn of the event loop, are handled together in the next batch (at
 * most `max` at a time), one batch at a time. The group commit (writer.ts) and admission
 * (budget.ts) both take this shape.
 */
export class Batches<T> {
  #queue: T[] = [];
  #running: Promise<void> | null = null;
  #closed = false;

  /** `handle` settles every item of its batch itself and never throws. */
  constructor(
    private readonly max: number,
    private readonly handle: (batch: T[]) => Promise<void>,
  ) {}

  /** Items waiting for the next batch. */
  get pending(): number {
    return this.#queue.length;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Queues `item` for the next batch (the caller checks {@link closed} first). */
  add(item: T): void {
    if (this.#closed) throw new Error('the store is closed');
    this.#queue.push(item);
    // the next turn, not at once: the items added in this turn join the batch
    if (this.#running === null) this.#running = new Promise<void>((done) => setImmediate(() => void this.#drain().then(done)));
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) await this.handle(this.#queue.splice(0, this.max));
    this.#running = null;
  }

  /** Handles what is queued, then refuses new items. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#running !== null) await this.#running;
  }
}
