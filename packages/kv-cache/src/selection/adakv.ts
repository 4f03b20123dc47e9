import { assertFiniteInRange, assertInteger, assertLength, LetheError } from '@lethe/core';
import type { Anchors } from '../geometry';
import type { LayerObservation } from '../policy/observation';
import { anchorMask } from './anchors';
import { shareRoundedUp } from './budget';
import { headRow, validateLayerScores } from './scores';
import { selectTopKRequired } from './top-k';

/** AdaKV's default safeguard: each head keeps at least 20% of its quota (kvpress `alpha_safeguard`). */
export const ADAKV_DEFAULT_SAFEGUARD = 0.2;

/**
 * AdaKV head-adaptive selection for one layer (Feng et al. 2024, as in NVIDIA kvpress's
 * `AdaKVPress`). Each head `h` has a quota `quotas[h]` (its uniform per-head keep count); the
 * layer keeps `Σ quotas` entries in total, chosen across all heads together by score, so heads
 * with sharper scores keep more. Safeguard: each head first keeps its best
 * `ceil(safeguard · quotas[h])` entries (kvpress rounds down; rounding up makes "at least that
 * fraction of its quota" hold literally) and its anchored entries; the remaining slots go to the
 * globally highest other entries, ties to the lower head, then the lower index. When the
 * safeguarded and anchored entries alone exceed `Σ quotas`, exactly those are kept.
 *
 * Scores must be comparable across heads (e.g. attention probabilities).
 *
 * @param scores `[kvHeads, maxLive]`, higher is more important; NaN in a live entry throws `E_ARG`.
 * @param quotas `[kvHeads]`, integers in `[0, liveCounts[h]]`.
 * @param safeguard Fraction in [0, 1] of each quota a head keeps regardless of other heads.
 * @returns One sorted keep set per head.
 */
export function selectAdaKV(
  scores: Float32Array,
  observation: LayerObservation,
  anchors: Anchors,
  quotas: Int32Array,
  safeguard = ADAKV_DEFAULT_SAFEGUARD,
): Int32Array[] {
  validateLayerScores(scores, observation);
  assertFiniteInRange(safeguard, 'safeguard', 0, 1);
  const { kvHeads, maxLive, liveCounts, positions } = observation;
  assertLength(quotas, kvHeads, 'quotas');

  // Flatten the live entries of all heads: head h occupies [offsets[h], offsets[h + 1]).
  const offsets = new Int32Array(kvHeads + 1);
  for (let h = 0; h < kvHeads; h++) {
    assertInteger(quotas[h], `quotas[${h}]`, 0);
    if (quotas[h] > liveCounts[h]) {
      throw new LetheError(
        'E_ARG',
        `head ${h}: quota ${quotas[h]} > live ${liveCounts[h]}`,
        'quotas',
      );
    }
    offsets[h + 1] = offsets[h] + liveCounts[h];
  }
  const flatScores = new Float32Array(offsets[kvHeads]);
  const required = new Uint8Array(offsets[kvHeads]);
  let total = 0;
  for (let h = 0; h < kvHeads; h++) {
    const live = liveCounts[h];
    const row = headRow(scores, h, maxLive, live);
    flatScores.set(row, offsets[h]);
    const safe = selectTopKRequired(
      row,
      new Uint8Array(live),
      shareRoundedUp(safeguard, quotas[h]),
    );
    for (const i of safe) required[offsets[h] + i] = 1;
    const anchored = anchorMask(headRow(positions, h, maxLive, live), anchors);
    for (let i = 0; i < live; i++) required[offsets[h] + i] |= anchored[i];
    total += quotas[h];
  }

  const kept = selectTopKRequired(flatScores, required, total);
  const keep: Int32Array[] = [];
  let at = 0;
  for (let h = 0; h < kvHeads; h++) {
    const start = at;
    while (at < kept.length && kept[at] < offsets[h + 1]) at++;
    keep.push(kept.subarray(start, at).map((flat) => flat - offsets[h]));
  }
  return keep;
}
