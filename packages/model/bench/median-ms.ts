/** Median wall time in ms of `rounds` calls of `run`, after one untimed warm-up call. */
export function medianMs(run: () => void, rounds: number): number {
  run();
  const times = Array.from({ length: rounds }, () => {
    const start = performance.now();
    run();
    return performance.now() - start;
  }).sort((a, b) => a - b);
  return times[rounds >> 1]!;
}
