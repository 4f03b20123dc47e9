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
 * Each (page, query head) sum runs over the channels in order in float64, so the scores do not
 * depend on how the pages are visited; four pages are scored side by side (four independent
 * sums, which the CPU overlaps instead of waiting on one chain of additions).
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
  const useMax = reduce === 'max';
  const start = useMax ? Number.NEGATIVE_INFINITY : 0;
  const scores = new Float32Array(endPage - firstPage);
  let p = firstPage;
  for (; p + 4 <= endPage; p += 4) {
    const r0 = p * headDim;
    const r1 = r0 + headDim;
    const r2 = r1 + headDim;
    const r3 = r2 + headDim;
    let s0 = start;
    let s1 = start;
    let s2 = start;
    let s3 = start;
    for (let q0 = 0; q0 < queries.length; q0 += headDim) {
      let t0 = 0;
      let t1 = 0;
      let t2 = 0;
      let t3 = 0;
      for (let c = 0; c < headDim; c++) {
        const q = queries[q0 + c];
        const side = q >= 0 ? max : min;
        t0 += q * side[r0 + c];
        t1 += q * side[r1 + c];
        t2 += q * side[r2 + c];
        t3 += q * side[r3 + c];
      }
      s0 = useMax ? Math.max(t0, s0) : s0 + t0;
      s1 = useMax ? Math.max(t1, s1) : s1 + t1;
      s2 = useMax ? Math.max(t2, s2) : s2 + t2;
      s3 = useMax ? Math.max(t3, s3) : s3 + t3;
    }
    const at = p - firstPage;
    scores[at] = s0;
    scores[at + 1] = s1;
    scores[at + 2] = s2;
    scores[at + 3] = s3;
  }
  for (; p < endPage; p++) {
    const row = p * headDim;
    let combined = start;
    for (let q0 = 0; q0 < queries.length; q0 += headDim) {
      let total = 0;
      for (let c = 0; c < headDim; c++) {
        const q = queries[q0 + c];
        total += q * (q >= 0 ? max : min)[row + c];
      }
      combined = useMax ? Math.max(total, combined) : combined + total;
    }
    scores[p - firstPage] = combined;
  }
  return scores;
}
