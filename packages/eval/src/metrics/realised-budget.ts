import type { Aggregate } from '../harness/results';
import { aggregate } from './aggregate';
import { pairedRatios } from './ratios';

/**
 * Realised budget: the fraction of the full-cache peak that a policy actually held, per example,
 *
 * ```text
 * realisedᵢ = peakᵢ^policy / peakᵢ^full
 * ```
 *
 * reported next to the requested budget (a policy asked for budget 0.25 may realise more, for
 * example because of attention sinks, recent windows or block granularity). It is the per-example
 * reciprocal of the quantity averaged by `peakKvReduction` (NGC eq. 7); because the mean of reciprocals
 * is not the reciprocal of the mean, the two means are not exact reciprocals of each other.
 *
 * @param policyPeaks - per-example peak KV entries under the evaluated policy.
 * @param fullPeaks - per-example peak KV entries under the full cache, same examples and order.
 * @returns mean ± standard error over examples.
 * @throws LetheError `E_ARG` for empty arrays or a NaN, infinite, zero or negative peak;
 *   `E_SHAPE` when the arrays differ in length.
 */
export function realisedBudget(
  policyPeaks: readonly number[],
  fullPeaks: readonly number[],
): Aggregate {
  return aggregate(pairedRatios(policyPeaks, 'policyPeaks', fullPeaks, 'fullPeaks'));
}
