import { assertFiniteInRange, assertInteger, assertLength, assertNoNaN } from '@lethe/core';
import type { Anchors } from '../geometry';
import { anchorMask } from './anchors';
import { selectTopKRequired } from './top-k';

/**
 * Threshold selection for one KV head (NAMM keeps entries whose score is ≥ 0): keeps every
 * entry with `score >= threshold`, every anchored entry and the newest entry (the token just
 * written is never evicted by its own round). With `cap`, at most `cap` entries are kept: the
 * anchored and newest entries, then the best of the others above the threshold (ties to the
 * older entry). Returns sorted live-entry indices.
 *
 * @param scores Scores of the live entries of one head, `[live]`.
 * @param positions Token positions of the same entries, `[live]`, increasing.
 * @param cap Most entries kept (a non-negative integer); default: no cap.
 * @throws LetheError `E_ARG` for NaN in `scores`, a non-finite `threshold` or a bad `cap`,
 * `E_SHAPE` for a length mismatch.
 */
export function selectAboveThreshold(
  scores: Float32Array,
  positions: Int32Array,
  anchors: Anchors,
  threshold: number,
  cap = Number.POSITIVE_INFINITY,
): Int32Array {
  assertLength(positions, scores.length, 'positions');
  assertNoNaN(scores, 'scores');
  assertFiniteInRange(threshold, 'threshold');
  if (cap !== Number.POSITIVE_INFINITY) assertInteger(cap, 'cap', 0);
  const live = scores.length;
  const required = anchorMask(positions, anchors);
  if (live > 0) required[live - 1] = 1;
  const eligible = new Float32Array(live);
  let count = 0;
  for (let i = 0; i < live; i++) {
    const above = scores[i] >= threshold;
    eligible[i] = above ? scores[i] : Number.NEGATIVE_INFINITY;
    if (above || required[i] === 1) count += 1;
  }
  return selectTopKRequired(eligible, required, Math.min(count, cap));
}
