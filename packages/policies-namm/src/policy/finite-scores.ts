import { LetheError } from '@lethe/core';

/**
 * Checks the scores of one KV head's entries before a round acts on them. A NaN compares below
 * every threshold, so it would evict its entry silently (and unorder a ranking); ±∞ means the
 * features or the scorer left the range `checkNammParameters` guarantees. NAMM refuses both, as
 * kv-cache's threshold selection refuses NaN.
 *
 * @throws LetheError `E_ARG` naming `scorer` (what produced them) with the layer, KV head,
 *   entry (its token position) and value of the first non-finite score.
 */
export function checkFiniteScores(
  scores: Float32Array,
  positions: Int32Array,
  layer: number,
  head: number,
): void {
  const bad = scores.findIndex((score) => !Number.isFinite(score));
  if (bad < 0) return;
  throw new LetheError(
    'E_ARG',
    `scored entry ${bad} (token position ${positions[bad]}) of layer ${layer}, KV head ${head} ${scores[bad]}: NAMM acts on finite scores only`,
    'scorer',
  );
}
