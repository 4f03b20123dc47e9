/**
 * How a pool splits `n` requests over `threads` workers: the first index of each of
 * `min(threads, n)` contiguous chunks of near-equal size (the first `n mod chunks` chunks are one
 * longer); empty for no requests. Chunk `c` is `[starts[c], starts[c + 1] ?? n)`.
 *
 * @example
 * ```ts
 * chunkStarts(7, 3); // [0, 3, 5]: chunks of 3, 2 and 2
 * ```
 */
export function chunkStarts(n: number, threads: number): number[] {
  if (n === 0) return [];
  const chunks = Math.min(threads, n);
  const base = Math.floor(n / chunks);
  const longer = n % chunks;
  return Array.from({ length: chunks }, (_, c) => c * base + Math.min(c, longer));
}
