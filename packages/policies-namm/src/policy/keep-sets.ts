/**
 * The `count` entries of `scores[0 … n − 1]` with the highest scores, the newest (index n − 1)
 * always among them, as increasing indices. Ties keep the newer entry.
 */
export function topScoring(scores: Float32Array, n: number, count: number): Int32Array {
  if (count >= n) return Int32Array.from({ length: n }, (_, i) => i);
  const order = Int32Array.from({ length: n - 1 }, (_, i) => i);
  order.sort((a, b) => scores[b]! - scores[a]! || b - a);
  const keep = new Int32Array(Math.max(count, 1));
  keep.set(order.subarray(0, keep.length - 1));
  keep[keep.length - 1] = n - 1;
  return keep.sort();
}

/** Indices of the entries scoring at least `threshold`, and the newest (index n − 1), increasing. */
export function atLeast(scores: Float32Array, n: number, threshold: number): Int32Array {
  const keep: number[] = [];
  for (let i = 0; i < n - 1; i++) if (scores[i]! >= threshold) keep.push(i);
  if (n > 0) keep.push(n - 1);
  return Int32Array.from(keep);
}
