import { assertLength } from '@lethe/core';
import { topKIndices } from '../selection/top-k';
import type { PageKeyBounds } from './page-key-bounds';
import type { QuestInputs } from './quest-inputs';
import { QuestKernel } from './quest-kernel';
import { laneQuestScores } from './quest-lanes';

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
 * The sums are float32, in a fixed order that does not depend on how the pages are visited: per
 * page and query head, four lane sums over the channels `c ≡ l (mod 4)` in increasing order,
 * then `(l0 + l2) + (l1 + l3)` (see `laneQuestScores`). Where the head dimension is a multiple
 * of 4 a WebAssembly SIMD kernel computes them (`QuestKernel`), elsewhere portable JavaScript
 * does, bit for bit the same.
 *
 * Inputs are not validated (a hot path: called per layer, sequence and KV head of every decode
 * step); see {@link pageUpperBounds} for a checked single-head form.
 *
 * @param bounds the KV head's page bounds, `[pages, headDim]`.
 * @param queries the group's query vectors, `[group, headDim]` (query heads `h·group …
 *   (h+1)·group − 1` of a `[queryHeads, headDim]` query, which are contiguous).
 * @returns `[endPage − firstPage]`.
 */
export function questPageScores(
  bounds: PageKeyBounds,
  queries: Float32Array,
  group: number,
  reduce: QuestGroupReduce = 'max',
  firstPage = 0,
  endPage = bounds.pages,
): Float32Array {
  const inputs: QuestInputs = { bounds, queries, group, firstPage, endPage };
  const useMax = reduce === 'max';
  const kernel = endPage > firstPage ? kernelFor(queries.length / group) : undefined;
  return kernel !== undefined ? kernel.scores(inputs, useMax) : laneQuestScores(inputs, useMax);
}

/**
 * The `k` pages of `[firstPage, endPage)` with the highest max-reduced {@link questPageScores},
 * as indices from `firstPage`, ascending, ties to the older page: `topKIndices` of those scores,
 * in the SIMD kernel when it runs (the scores never leave it). Unchecked, as
 * {@link questPageScores}; `1 ≤ k ≤ endPage − firstPage`.
 */
export function questTopPages(inputs: QuestInputs, k: number): Int32Array {
  const kernel = kernelFor(inputs.queries.length / inputs.group);
  return kernel !== undefined
    ? kernel.topPages(inputs, k)
    : topKIndices(laneQuestScores(inputs, true), k);
}

/** The SIMD kernel once loaded; null where the runtime lacks WebAssembly SIMD. */
let loaded: QuestKernel | null | undefined;

/** The kernel where it runs and takes this head dimension (a multiple of 4). */
function kernelFor(headDim: number): QuestKernel | undefined {
  if (headDim % 4 !== 0) return undefined;
  loaded ??= QuestKernel.load() ?? null;
  return loaded ?? undefined;
}
