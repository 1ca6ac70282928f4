/**
 * Elapsed time for traces and reports. process.hrtime rather than the global `performance`,
 * whose first use loads Node's perf_hooks (a dozen modules) into every command.
 */

/** Starts a stopwatch; the function returns the milliseconds since. */
export function stopwatch(): () => number {
  const started = process.hrtime.bigint();
  return () => Number(process.hrtime.bigint() - started) / 1e6;
}
