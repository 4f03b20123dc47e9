import { LetheError } from '@lethe/core';
import type { KeepDecision } from '../policy/eviction-policy';
import type { LayerObservation } from '../policy/observation';
import { headRow, validateLayerScores } from './scores';

/** Whether each KV head gets its own keep set (`'head'`) or the layer shares one (`'layer'`). */
export type Granularity = 'head' | 'layer';

/** Throws `E_ARG` unless `granularity` is `'head'` or `'layer'`. */
export function validateGranularity(
  granularity: Granularity,
  argument = 'granularity',
): Granularity {
  if (granularity !== 'head' && granularity !== 'layer') {
    throw new LetheError('E_ARG', `must be "head" or "layer", got "${granularity}"`, argument);
  }
  return granularity;
}

/** Chooses the kept live-entry indices (sorted) of one row from its scores and positions. */
export type RowSelector = (scores: Float32Array, positions: Int32Array) => Int32Array;

/**
 * The common live count of a layer whose KV heads hold the same entries (same count and the same
 * token positions), as layer-granularity decisions require.
 *
 * @throws LetheError `E_STATE` when heads differ.
 */
export function alignedLiveCount(observation: LayerObservation): number {
  const { kvHeads, maxLive, liveCounts, positions } = observation;
  const live = liveCounts[0] ?? 0;
  for (let h = 1; h < kvHeads; h++) {
    if (liveCounts[h] !== live) {
      throw new LetheError(
        'E_STATE',
        `layer granularity needs equal live sets on every KV head; head 0 has ${live} entries, head ${h} has ${liveCounts[h]}`,
        'observation.liveCounts',
      );
    }
    for (let i = 0; i < live; i++) {
      if (positions[h * maxLive + i] !== positions[i]) {
        throw new LetheError(
          'E_STATE',
          `layer granularity needs equal live sets on every KV head; head ${h} differs at entry ${i}`,
          'observation.positions',
        );
      }
    }
  }
  return live;
}

/** Mean over KV heads of `scores` (`[kvHeads, maxLive]`) for the first `live` entries, `[live]`. */
export function meanOverHeads(
  scores: Float32Array,
  kvHeads: number,
  maxLive: number,
  live: number,
): Float32Array {
  const mean = new Float32Array(live);
  for (let i = 0; i < live; i++) {
    let total = 0;
    for (let h = 0; h < kvHeads; h++) total += scores[h * maxLive + i];
    mean[i] = total / kvHeads;
  }
  return mean;
}

/**
 * Turns one layer's scores into a {@link KeepDecision}.
 *
 * - `'head'`: `selectRow` runs on each head's live row; the decision holds one keep set per head.
 * - `'layer'`: the heads must hold the same entries ({@link alignedLiveCount}); their scores are
 *   averaged over heads and `selectRow` runs once; the decision holds that one keep set.
 *
 * The decision carries `scores` (`KeepDecision.scores`: what it was chosen from).
 *
 * @param scores `[kvHeads, maxLive]`, higher is more important; NaN in a live entry throws `E_ARG`.
 */
export function decideKeep(
  scores: Float32Array,
  observation: LayerObservation,
  granularity: Granularity,
  selectRow: RowSelector,
): KeepDecision {
  validateGranularity(granularity);
  validateLayerScores(scores, observation);
  const { kvHeads, maxLive, liveCounts, positions } = observation;
  if (granularity === 'layer') {
    const live = alignedLiveCount(observation);
    const mean = meanOverHeads(scores, kvHeads, maxLive, live);
    return { granularity: 'layer', keep: selectRow(mean, positions.subarray(0, live)), scores };
  }
  const keep: Int32Array[] = [];
  for (let h = 0; h < kvHeads; h++) {
    const live = liveCounts[h];
    keep.push(selectRow(headRow(scores, h, maxLive, live), headRow(positions, h, maxLive, live)));
  }
  return { granularity: 'head', keep, scores };
}
