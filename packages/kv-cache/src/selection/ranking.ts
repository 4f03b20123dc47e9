/**
 * The deterministic order every selection in Lethe uses: entry `a` ranks before entry `b` when
 * its score is higher, or when the scores are equal and `a` has the lower index (so ties keep
 * older entries, which sit at lower indices of a live row).
 */
export function ranksBefore(scores: ArrayLike<number>, a: number, b: number): boolean {
  const sa = scores[a];
  const sb = scores[b];
  return sa > sb || (sa === sb && a < b);
}
