/**
 * A GSA cache run token by token: write the token, then while more than `selected` evictable
 * entries (past the sinks, out of the window) are held, drop the one of lowest score (of equal
 * scores the younger, as every Lethe selection does). Returns the entries held at each row.
 */
export function simulateCache(scores: number[], sinks: number, window: number, selected: number) {
  const held: number[] = [];
  return scores.map((_, t) => {
    held.push(t);
    for (;;) {
      const evictable = held.filter((j) => j >= sinks && j <= t - window);
      if (evictable.length <= selected) break;
      const lowest = evictable.reduce((a, b) => (scores[b]! <= scores[a]! ? b : a));
      held.splice(held.indexOf(lowest), 1);
    }
    return new Set(held);
  });
}
