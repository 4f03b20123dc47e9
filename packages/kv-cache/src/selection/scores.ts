import { assertLength, LetheError } from '@lethe/core';
import type { LayerObservation } from '../policy/observation';

/**
 * Checks a per-entry score array for one layer: length `kvHeads · maxLive` (layout
 * `[kvHeads, maxLive]`) and no NaN among the live entries (padding is ignored). Also checks the
 * observation's own layout (`liveCounts` `[kvHeads]` within `maxLive`, `positions`
 * `[kvHeads, maxLive]`).
 *
 * @throws LetheError `E_SHAPE` for a wrong length or live count, `E_ARG` (argument `scores`)
 * naming the head and entry of the first NaN.
 */
export function validateLayerScores(
  scores: Float32Array,
  observation: LayerObservation,
): Float32Array {
  const { kvHeads, maxLive, liveCounts, positions } = observation;
  assertLength(liveCounts, kvHeads, 'observation.liveCounts');
  assertLength(positions, kvHeads * maxLive, 'observation.positions');
  for (let h = 0; h < kvHeads; h++) {
    if (!(liveCounts[h] >= 0 && liveCounts[h] <= maxLive)) {
      throw new LetheError(
        'E_SHAPE',
        `head ${h}: ${liveCounts[h]} outside [0, ${maxLive}]`,
        'observation.liveCounts',
      );
    }
  }
  assertLength(scores, kvHeads * maxLive, 'scores');
  for (let h = 0; h < kvHeads; h++) {
    for (let i = 0; i < liveCounts[h]; i++) {
      if (Number.isNaN(scores[h * maxLive + i])) {
        throw new LetheError('E_ARG', `NaN at head ${h}, entry ${i}`, 'scores');
      }
    }
  }
  return scores;
}

/** Row `head` of a `[kvHeads, maxLive]` array, restricted to that head's `live` entries (a view). */
export function headRow<T extends Float32Array | Int32Array>(
  values: T,
  head: number,
  maxLive: number,
  live: number,
): T {
  return values.subarray(head * maxLive, head * maxLive + live) as T;
}
