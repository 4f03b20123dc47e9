import type { Aggregate } from '../harness/results';
import { aggregate } from './aggregate';
import { pairedRatios } from './ratios';

/**
 * Average peak KV cache reduction, NGC (Neural Garbage Collection) eq. 7: the factor by which
 * a method reduces the peak KV cache size relative to no eviction,
 *
 * ```text
 *                 ⎡ peak(pᵢ, cᵢ^base, 0, θ)       ⎤
 * reduction = E_i ⎢ ───────────────────────────── ⎥
 *                 ⎣ peak(pᵢ, cᵢ^method, ε, θ)     ⎦
 * ```
 *
 * where `pᵢ` is the prompt length of example `i`, `cᵢ^base` / `cᵢ^method` its completion lengths
 * without eviction / under the method, `ε` the eviction rate, `θ` the eviction cadence, and
 * `peak(·)` the maximum number of KV entries held at any point during generation. The
 * expectation is over prompts, so the ratio is taken per example and then averaged (it is not
 * the ratio of the average peaks). A value of 2 means the method uses half the peak memory of
 * the full cache.
 *
 * @param policyPeaks - per-example peak KV entries under the evaluated policy (the denominator).
 * @param fullPeaks - per-example peak KV entries under the full cache, same examples and order.
 * @returns mean ± standard error over examples of the per-example factor; `mean` is eq. 7.
 * @throws LetheError `E_ARG` for empty arrays or a NaN, infinite, zero or negative peak;
 *   `E_SHAPE` when the arrays differ in length.
 */
export function peakKvReduction(
  policyPeaks: readonly number[],
  fullPeaks: readonly number[],
): Aggregate {
  return aggregate(pairedRatios(fullPeaks, 'fullPeaks', policyPeaks, 'policyPeaks'));
}
