/**
 * What a write derives that every backend computes the same way (docs/service.md, coverage and
 * systems): the time a record counts from.
 */

/** When a record counts from: back-dating helps, future-dating cannot inflate freshness. */
export function countsFromMs(claimedMs: number, receivedMs: number): number {
  return Math.min(claimedMs, receivedMs);
}
