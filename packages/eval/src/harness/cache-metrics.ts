import {
  aggregate,
  keepFractions,
  netKeepRate,
  peakKvReduction,
  realisedBudget,
  realisedKeepRate,
} from '../metrics/index';
import type { ReadTrace } from './read-trace';
import type { Aggregate } from './results';

/** The cache metrics of a cell, each aggregated over its sequences. */
export interface CacheMetrics {
  readonly peakKvReduction: Aggregate;
  readonly meanLive: Aggregate;
  readonly peakLive: Aggregate;
  readonly netKeepRate: Aggregate;
  readonly realisedBudget: Aggregate;
}

/**
 * Cache metrics of a cell's sequences against the full-cache peaks of the same sequences
 * (same example, same sample stream), each aggregated (mean ± stderr) over sequences:
 *
 * - `realisedBudget`: peakᵢ / fullPeakᵢ;
 * - `peakKvReduction`: NGC eq. 7, the factor fullPeakᵢ / peakᵢ (1 for the full cache, 2 for
 *   half the peak memory);
 * - `meanLive`: entries read per predicted token, averaged over the sequence's tokens;
 * - `peakLive`: peakᵢ;
 * - `netKeepRate`: SOL's net keep-rate with only the attention axis, the realised fraction of
 *   the full cache's reads performed, averaged over the sequence's predicted tokens.
 *
 * Peaks and reads are summed over layers and KV heads.
 */
export function cacheMetrics(
  traces: readonly ReadTrace[],
  fullPeaks: readonly number[],
): CacheMetrics {
  const peaks = traces.map((t) => t.peakTotal);
  const realised = realisedBudget(peaks, fullPeaks);
  return {
    peakKvReduction: peakKvReduction(peaks, fullPeaks),
    meanLive: aggregate(traces.map((t) => t.read.reduce((s, r) => s + r, 0) / t.read.length)),
    peakLive: aggregate(peaks),
    netKeepRate: aggregate(
      traces.map((t) =>
        netKeepRate({ attention: realisedKeepRate(keepFractions([...t.read], [...t.available])) }),
      ),
    ),
    realisedBudget: realised,
  };
}

/**
 * Throughput aggregated over batches: tokens ÷ clock seconds of each batch (0 for a batch
 * during which the clock did not advance).
 */
export function throughput(batches: readonly { tokens: number; ms: number }[]): Aggregate {
  return aggregate(batches.map((b) => (b.ms > 0 ? (b.tokens * 1000) / b.ms : 0)));
}
