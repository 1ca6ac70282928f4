/**
 * A timer the test fires by hand, for the mechanisms that take one instead of setTimeout (the
 * client's batch buffer, the service's group commit): `later(fn, ms)` schedules and returns a
 * cancel function, as their timer parameters expect.
 */
export function manualTimer() {
  const waits: { ms: number; fn: () => void; live: boolean }[] = [];
  const timer = {
    later(fn: () => void, ms: number): () => void {
      const wait = { ms, fn, live: true };
      waits.push(wait);
      return () => {
        wait.live = false;
      };
    },
  };
  return {
    timer,
    /** the waits scheduled and not cancelled, by length */
    waiting: () => waits.filter((wait) => wait.live).map((wait) => wait.ms),
    /** ends every wait now */
    fire() {
      for (const wait of waits.splice(0)) {
        if (!wait.live) continue;
        wait.live = false;
        wait.fn();
      }
    },
  };
}
