import { assertFiniteInRange, assertLength, assertNoNaN } from '@lethe/tensor';
import type { Anchors } from '../geometry';
import { anchorMask } from './anchors';

/**
 * Threshold selection for one KV head (NAMM keeps entries whose score is ≥ 0): keeps every
 * entry with `score >= threshold` and every anchored entry. Returns sorted live-entry indices.
 *
 * @param scores Scores of the live entries of one head, `[live]`.
 * @param positions Token positions of the same entries, `[live]`, increasing.
 * @throws LetheError `E_ARG` for NaN in `scores` or a non-finite `threshold`, `E_SHAPE` for a
 * length mismatch.
 */
export function selectAboveThreshold(
  scores: Float32Array,
  positions: Int32Array,
  anchors: Anchors,
  threshold: number,
): Int32Array {
  assertLength(positions, scores.length, 'positions');
  assertNoNaN(scores, 'scores');
  assertFiniteInRange(threshold, 'threshold');
  const anchored = anchorMask(positions, anchors);
  const kept: number[] = [];
  for (let i = 0; i < scores.length; i++) {
    if (anchored[i] === 1 || scores[i] >= threshold) kept.push(i);
  }
  return Int32Array.from(kept);
}
