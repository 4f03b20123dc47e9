import { assertInteger, assertLength, LetheError } from '@lethe/core';
import { aggregateBlocks, type LayerObservation } from '@lethe/kv-cache';

/**
 * Number of live entries of a layer whose KV heads all hold the same entries (same live counts
 * and positions) — the precondition of NGC's per-layer eviction, where one keep set applies to
 * every head.
 *
 * @throws LetheError `E_STATE` (argument `observation`) when the heads differ, `E_SHAPE` for a
 * malformed `liveCounts` / `positions`.
 */
export function sharedLiveCount(observation: LayerObservation): number {
  const { kvHeads, maxLive, liveCounts, positions } = observation;
  assertLength(liveCounts, kvHeads, 'observation.liveCounts');
  assertLength(positions, kvHeads * maxLive, 'observation.positions');
  const live = kvHeads > 0 ? liveCounts[0] : 0;
  if (!(live >= 0 && live <= maxLive)) {
    throw new LetheError('E_SHAPE', `${live} outside [0, ${maxLive}]`, 'observation.liveCounts');
  }
  for (let h = 1; h < kvHeads; h++) {
    if (liveCounts[h] !== live) {
      throw new LetheError(
        'E_STATE',
        `KV head ${h} holds ${liveCounts[h]} entries, head 0 holds ${live}; NGC evicts per layer and needs equal live sets`,
        'observation',
      );
    }
    for (let i = 0; i < live; i++) {
      if (positions[h * maxLive + i] !== positions[i]) {
        throw new LetheError(
          'E_STATE',
          `KV head ${h} entry ${i} is position ${positions[h * maxLive + i]}, head 0 has ${positions[i]}; NGC evicts per layer and needs equal live sets`,
          'observation',
        );
      }
    }
  }
  return live;
}

/**
 * NGC's importance of every live entry of one layer (§4.2): the attention the `window` most recent
 * queries pay to it, averaged over *all* query heads of the layer and over those queries,
 *
 *   ψ_t = 1 / (H · w) · Σ_{h=1..H} Σ_{q=1..w} A^{(h)}_{q,t},
 *
 * with w = `observation.window` (the queries the runtime observed, at most the policy's
 * `attentionWindow`) and A the causal softmax attention in `observation.attention` (an entry newer
 * than a query gets 0 from it, and still counts in the average). Every live entry is scored,
 * including the window's own tokens. Accumulated in float64.
 *
 * @returns `[live]` scores, in live-entry order (empty when nothing is live).
 * @throws LetheError `E_STATE` when the KV heads hold different live sets; `E_ARG` when the
 * observation has live entries but no observed query or no `attention`; `E_SHAPE` for a wrong
 * `attention` length.
 */
export function entryScores(observation: LayerObservation): Float32Array {
  const live = sharedLiveCount(observation);
  if (live === 0) return new Float32Array(0);
  const { window, queryHeads, maxLive, attention } = observation;
  if (!(Number.isInteger(window) && window >= 1)) {
    throw new LetheError(
      'E_ARG',
      `needs at least one observed query, got window = ${window}`,
      'observation.window',
    );
  }
  assertInteger(queryHeads, 'observation.queryHeads', 1);
  if (attention === undefined) {
    throw new LetheError(
      'E_ARG',
      'missing; NgcPolicy needs it (see `needs.attentionWindow`)',
      'observation.attention',
    );
  }
  assertLength(attention, window * queryHeads * maxLive, 'observation.attention');
  const sums = new Float64Array(live);
  for (let row = 0; row < window * queryHeads; row++) {
    const offset = row * maxLive;
    for (let i = 0; i < live; i++) sums[i] += attention[offset + i];
  }
  const scores = new Float32Array(live);
  const divisor = window * queryHeads;
  for (let i = 0; i < live; i++) scores[i] = sums[i] / divisor;
  return scores;
}

/**
 * NGC's block scores of one layer (§4.2): the {@link entryScores} averaged over each block of
 * `blockSize` consecutive live entries, s_j = Σ_{t∈B_j} m_t ψ_t / Σ_{t∈B_j} m_t. There are
 * N = ⌈live / blockSize⌉ blocks; the last one may be short and averages only its own entries
 * (kv-cache's `aggregateBlocks(…, 'mean')`).
 *
 * @returns `[N]` block scores.
 * @throws LetheError as {@link entryScores}, and `E_ARG` (`blockSize`) unless a positive integer.
 */
export function blockScores(observation: LayerObservation, blockSize: number): Float32Array {
  assertInteger(blockSize, 'blockSize', 1);
  return aggregateBlocks(entryScores(observation), blockSize, 'mean');
}
