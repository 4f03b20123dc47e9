import type { LayerView } from '@lethe/kv-cache';

/** Quest's settings as `QuestSelector` documents them (its defaults: minPages 3, denseLayers 2). */
export interface QuestReferenceOptions {
  readonly tokenBudget: number;
  readonly pageSize: number;
  readonly minPages?: number;
  readonly denseLayers?: number;
}

/**
 * Quest's page choice for one layer, written out from `QuestSelector`'s definition with plain
 * loops and none of its code: layers below `denseLayers` read densely; the page budget is
 * `max(minPages, floor(tokenBudget / pageSize))`; when no head has more pages than that, the
 * read is dense; otherwise a head with few pages reads them all, and any other head reads its
 * newest page plus the best-scoring others, a page's score being the highest over the query
 * heads of the group of `Σ_c max(q_c·max_c, q_c·min_c)` (channel-wise key max / min over the
 * page), ties to the older page.
 *
 * @param view the layer before the step (`keys` `[kvHeads, maxLive, headDim]`).
 * @param query the step's query after RoPE at this layer, `[queryHeads, headDim]`.
 * @returns sorted pages per KV head, or undefined for a dense read.
 */
export function questPagesByDefinition(
  view: LayerView,
  query: Float32Array,
  options: QuestReferenceOptions,
): Int32Array[] | undefined {
  const { tokenBudget, pageSize, minPages = 3, denseLayers = 2 } = options;
  if (view.layer < denseLayers) return undefined;
  const { liveCounts } = view;
  const budget = Math.max(minPages, Math.floor(tokenBudget / pageSize));
  const pageCounts = Array.from(liveCounts, (live) => Math.ceil(live / pageSize));
  if (pageCounts.every((pages) => pages <= budget)) return undefined;
  return pageCounts.map((pages, h) => {
    if (pages <= budget) return Int32Array.from({ length: pages }, (_, p) => p);
    const score = (p: number): number => pageBoundByDefinition(view, query, h, p, pageSize);
    const others = Array.from({ length: pages - 1 }, (_, p) => ({ p, s: score(p) }));
    others.sort((x, y) => y.s - x.s || x.p - y.p);
    const chosen = [...others.slice(0, budget - 1).map((o) => o.p), pages - 1];
    return Int32Array.from(chosen).sort();
  });
}

/**
 * Quest's bound of page `p` of KV head `h`, by brute force from the live keys: over the group's
 * query heads, the largest `Σ_c max(q_c·max_c, q_c·min_c)` with the channel-wise key max / min
 * over the page's live entries.
 */
export function pageBoundByDefinition(
  view: LayerView,
  query: Float32Array,
  h: number,
  p: number,
  pageSize: number,
): number {
  const { kvHeads, headDim, maxLive, liveCounts, keys } = view;
  const group = query.length / headDim / kvHeads;
  let best = Number.NEGATIVE_INFINITY;
  for (let a = h * group; a < (h + 1) * group; a++) {
    let sum = 0;
    for (let c = 0; c < headDim; c++) {
      let hi = Number.NEGATIVE_INFINITY;
      let lo = Number.POSITIVE_INFINITY;
      for (let i = p * pageSize; i < Math.min(liveCounts[h]!, (p + 1) * pageSize); i++) {
        const k = keys[(h * maxLive + i) * headDim + c]!;
        hi = Math.max(hi, k);
        lo = Math.min(lo, k);
      }
      const q = query[a * headDim + c]!;
      sum += Math.max(q * hi, q * lo);
    }
    best = Math.max(best, sum);
  }
  return best;
}
