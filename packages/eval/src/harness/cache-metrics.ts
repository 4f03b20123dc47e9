import type { ControlledAxes } from '@lethe/kv-cache';
import type { ComputeUsage } from '@lethe/model';
import {
  aggregate,
  keepFractions,
  netKeepRate,
  peakKvReduction,
  realisedBudget,
  realisedKeepRate,
} from '../metrics/index';
import { requireNonEmpty, requireNonNegative, requirePositive } from '../metrics/validate';
import { requireArray, requireObject } from './arguments';
import type { ReadTrace } from './read-trace';
import type { Aggregate } from './results';

/** The cache metrics of a cell, each aggregated over its sequences. */
export interface CacheMetrics {
  readonly peakKvReduction: Aggregate;
  readonly meanLive: Aggregate;
  readonly peakLive: Aggregate;
  readonly peakKvBytes: Aggregate;
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
 * - `meanLive`: live entries (the new token's included) per predicted token, averaged over the
 *   sequence's tokens;
 * - `peakLive`: peakᵢ;
 * - `peakKvBytes`: peakᵢ · `entryBytes` (see {@link kvEntryBytes});
 * - `netKeepRate`: SOL's net keep-rate with only the attention axis, the realised fraction of
 *   the full cache's reads performed, averaged over the sequence's predicted tokens — below 1
 *   for an eviction policy (fewer entries live) and for a read selector (fewer entries read of a
 *   cache that keeps them all, the runtime's decode reads: see `ReadTrace.read`).
 *
 * Peaks and reads are summed over layers and KV heads.
 *
 * @throws LetheError `E_ARG` naming `traces` or `fullPeaks` when it is not an array, and the
 *   errors of the metrics (`E_SHAPE` for lengths that differ, `E_ARG` for bad values).
 */
export function cacheMetrics(
  traces: readonly ReadTrace[],
  fullPeaks: readonly number[],
  entryBytes: number,
): CacheMetrics {
  requireArray(traces, 'traces');
  requireArray(fullPeaks, 'fullPeaks');
  requirePositive(entryBytes, 'entryBytes');
  const peaks = traces.map((t) => t.peakTotal);
  const realised = realisedBudget(peaks, fullPeaks);
  return {
    peakKvReduction: peakKvReduction(peaks, fullPeaks),
    meanLive: aggregate(traces.map((t) => t.live.reduce((s, r) => s + r, 0) / t.live.length)),
    peakLive: aggregate(peaks),
    peakKvBytes: aggregate(peaks.map((peak) => peak * entryBytes)),
    netKeepRate: aggregate(traces.map((t) => netKeepRate({ attention: attentionKeepRate(t) }))),
    realisedBudget: realised,
  };
}

/**
 * Bytes of one cache entry's key and value for one KV head of a model: `2 · head_dim` float32s
 * (the caches hold float32; the bookkeeping beside them — positions, stamps, scores — is not
 * counted, as KV-compression papers count memory).
 */
export function kvEntryBytes(config: { readonly head_dim: number }): number {
  return 2 * config.head_dim * Float32Array.BYTES_PER_ELEMENT;
}

/**
 * The realised fraction of the full cache's reads a sequence's attention performed (the
 * attention axis of {@link cacheMetrics}' `netKeepRate`).
 */
export function attentionKeepRate(trace: ReadTrace): number {
  return realisedKeepRate(keepFractions([...trace.read], [...trace.available]));
}

/**
 * SOL's net keep-rate of sequences run under a compute policy that declares the knobs it sets:
 * per sequence, the mean of the realised averages of those axes (`κ̄`, `ρ̄`, `η̄ = q̄ / 16`, as the
 * runtime's `ComputeUsage` records them), aggregated over sequences; undefined when it declares
 * none (the attention reads then tell the net keep-rate, see {@link cacheMetrics}).
 *
 * @param attention per sequence, its {@link attentionKeepRate}, for a compute policy composed
 *   with an eviction policy or a read selector: the attention axis is then always counted, from
 *   the reads (`κ̄` alone would not count the entries they dropped).
 * @throws LetheError as `netKeepRate` for a realised average outside [0, 1].
 */
export function computeNetKeepRate(
  usages: readonly ComputeUsage[],
  axes: ControlledAxes | undefined,
  attention?: readonly number[],
): Aggregate | undefined {
  if (axes === undefined || !(axes.tokenKeep || axes.mlpInputKeep || axes.activationBits)) {
    return undefined;
  }
  return aggregate(
    usages.map((usage, i) =>
      netKeepRate({
        ...(attention !== undefined
          ? { attention: attention[i]! }
          : axes.tokenKeep
            ? { attention: usage.tokenKeep }
            : {}),
        ...(axes.mlpInputKeep ? { mlp: usage.mlpInputKeep } : {}),
        ...(axes.activationBits ? { precision: usage.precision } : {}),
      }),
    ),
  );
}

/**
 * Throughput aggregated over batches: the tokens the model ran on in each batch ÷ the clock
 * seconds of that same work (0 for a batch during which the clock did not advance). Every
 * cell passes the same work: a generation batch its prompt tokens and fed-back generated tokens
 * over prefill + decode (`RolloutBatch`), a teacher-forced batch its fed tokens over its whole
 * pass (`TeacherForcedBatch`).
 *
 * @throws LetheError `E_ARG` naming `batches` when it is not a non-empty array, or
 *   `batches[i].tokens` / `batches[i].ms` unless they are finite numbers ≥ 0.
 */
export function throughput(batches: readonly { tokens: number; ms: number }[]): Aggregate {
  requireNonEmpty(batches, 'batches');
  return aggregate(
    batches.map((batch, i) => {
      requireObject(batch, `batches[${i}]`, 'an object { tokens, ms }');
      const tokens = requireNonNegative(batch.tokens, `batches[${i}].tokens`);
      const ms = requireNonNegative(batch.ms, `batches[${i}].ms`);
      return ms > 0 ? (tokens * 1000) / ms : 0;
    }),
  );
}
