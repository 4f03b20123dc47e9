import { assertLength } from '@lethe/core';
import type { PageKeyBounds } from './page-key-bounds';

/** How the page bounds of the query heads sharing one KV head (a GQA group) combine. */
export type QuestGroupReduce = 'max' | 'sum';

/**
 * Quest's criticality of each page for one query vector: `Σ_c max(q_c·max_c, q_c·min_c)`, an
 * upper bound of `q·k` over every key `k` of the page (each channel's product is maximised
 * independently).
 *
 * @param query one query head's vector, `[headDim]`.
 * @returns `[pages]`.
 * @throws LetheError `E_SHAPE` naming `bounds.min` when the bounds are not `[pages, headDim]`.
 */
export function pageUpperBounds(bounds: PageKeyBounds, query: Float32Array): Float32Array {
  assertLength(bounds.min, bounds.pages * query.length, 'bounds.min');
  assertLength(bounds.max, bounds.pages * query.length, 'bounds.max');
  return questPageScores(bounds, query, 1);
}

/**
 * Quest's page scores for one KV head: per page `p` in `[firstPage, endPage)`, the bound
 * `Σ_c max(q_c·max_c, q_c·min_c)` of each of the `group` query heads reading the KV head,
 * reduced by `'max'` (default; still an upper bound of every head's `q·k`, Quest's reduction for
 * GQA in Lethe) or `'sum'`. This is the one implementation of the bound that `QuestSelector`
 * (`@lethe/policies-heuristic`) and `@lethe/model`'s `tokenKeep` read both use.
 *
 * Inputs are not validated (a hot path: called per layer, sequence and KV head of every decode
 * step); see {@link pageUpperBounds} for a checked single-head form.
 *
 * @param bounds the KV head's page bounds, `[pages, headDim]`.
 * @param queries the group's query vectors, `[group, headDim]` (query heads `h·group …
 *   (h+1)·group − 1` of a `[queryHeads, headDim]` query, which are contiguous).
 * @returns `[endPage − firstPage]`, float64 sums rounded to float32.
 */
export function questPageScores(
  bounds: PageKeyBounds,
  queries: Float32Array,
  group: number,
  reduce: QuestGroupReduce = 'max',
  firstPage = 0,
  endPage = bounds.pages,
): Float32Array {
  const headDim = queries.length / group;
  const { min, max } = bounds;
  const scores = new Float32Array(endPage - firstPage);
  for (let p = firstPage; p < endPage; p++) {
    const row = p * headDim;
    let combined = reduce === 'max' ? Number.NEGATIVE_INFINITY : 0;
    for (let g = 0; g < group; g++) {
      const q0 = g * headDim;
      let total = 0;
      for (let c = 0; c < headDim; c++) {
        const q = queries[q0 + c];
        total += q >= 0 ? q * max[row + c] : q * min[row + c];
      }
      combined = reduce === 'max' ? Math.max(total, combined) : combined + total;
    }
    scores[p - firstPage] = combined;
  }
  return scores;
}
