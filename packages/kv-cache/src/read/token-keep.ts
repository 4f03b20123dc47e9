import type { PageKeyBounds } from './page-key-bounds';
import { candidatePages, type TopPagesRead, topPagesRanges } from './page-ranking';
import type { ReadAnchors } from './read-anchors';

/**
 * What a token reads of one KV head under SOL's token keep rate κ (App. E.1); see
 * {@link tokenKeepRead}.
 */
export interface TokenKeepRead {
  /** The entries read, as entry ranges (sorted, disjoint `[start, end)` pairs of live indices). */
  readonly ranges: Int32Array;
  /** Entries read: `s + w + Σ over the chosen pages of |page ∩ [s, K − w)|`. */
  readonly count: number;
  /** Pages chosen by the Quest bound: {@link tokenKeepPageCount}. */
  readonly pages: number;
}

/**
 * The budget `b = ⌈κ·K⌉` of SOL's token keep rate κ over a head of `K = live` entries (float64
 * product, then `Math.ceil`), the number of entries the whole read is sized to.
 */
export function tokenKeepBudget(keepRate: number, live: number): number {
  return Math.min(live, Math.ceil(keepRate * live));
}

/**
 * Pages a κ read of a head of `K = live` entries chooses: with `s = min(sinks, K)` and
 * `w = min(window, K − s)` anchored entries, `n = ⌈max(0, b − s − w) / pageSize⌉` — the anchors
 * count against the budget `b` ({@link tokenKeepBudget}) and the pages fill the rest, rounded up
 * to whole pages.
 */
export function tokenKeepPageCount(
  keepRate: number,
  live: number,
  anchors: ReadAnchors,
  pageSize: number,
): number {
  const sinks = Math.min(anchors.sinks, live);
  const window = Math.min(anchors.window, live - sinks);
  return Math.ceil(Math.max(0, tokenKeepBudget(keepRate, live) - sinks - window) / pageSize);
}

/**
 * SOL's κ read of one KV head of `K = live` entries as a {@link TopPagesRead}: the anchors, the
 * first `s = min(sinks, K)` and the last `w = min(window, K − s)` entries, and the top
 * {@link tokenKeepPageCount} pages of the middle `[s, K − w)` (so the anchors count against
 * `b = ⌈κ·K⌉`); undefined when the read is every live entry (κ = 1, the pages cover every
 * candidate page, or the anchors cover the head).
 */
export function tokenKeepRanking(
  live: number,
  keepRate: number,
  anchors: ReadAnchors,
  pageSize: number,
): TopPagesRead | undefined {
  if (keepRate >= 1) return undefined;
  const sinks = Math.min(anchors.sinks, live);
  const middleEnd = live - Math.min(anchors.window, live - sinks);
  const read = { sinks, middleEnd, pages: tokenKeepPageCount(keepRate, live, anchors, pageSize) };
  const { firstPage, endPage } = candidatePages(read, pageSize);
  return sinks >= middleEnd || read.pages >= endPage - firstPage ? undefined : read;
}

/**
 * SOL's token sparsity (App. E.1, with §4's always-dense anchors) for one KV head and one new
 * token: of the head's `K = live` entries it reads
 *
 * - the anchors: the first `s = min(sinks, K)` and the last `w = min(window, K − s)` entries;
 * - of the *middle* `[s, K − w)`, the entries of the top `n` pages ({@link tokenKeepPageCount},
 *   so the anchors count against `b = ⌈κ·K⌉`) among the pages that hold a middle entry, ranked
 *   by Quest's bound for the token's query reduced over the GQA group by max
 *   (`questPageScores`; chosen by `questTopPages`), ties to the older page. Pages are the
 *   cache's: page `p` = entries `[p·pageSize, (p+1)·pageSize)`, so the first and the last
 *   candidate page may hold fewer than `pageSize` middle entries; the read is at most
 *   `b + pageSize − 1` entries when `b` exceeds the anchors.
 *
 * This is {@link tokenKeepRanking} run by `topPagesRanges` on the host.
 *
 * @param bounds the head's page bounds (`KVCacheStore.pageKeyBounds`).
 * @param queries the token's query heads of the group, `[group, headDim]`, after RoPE.
 * @param keepRate κ in (0, 1] (checked by the caller).
 * @returns the read, or undefined when it is every live entry (κ = 1, `n` covers every
 *   candidate page, or the anchors cover the head): a dense read needs no ranges.
 */
export function tokenKeepRead(
  live: number,
  bounds: PageKeyBounds,
  queries: Float32Array,
  group: number,
  keepRate: number,
  anchors: ReadAnchors,
  pageSize: number,
): TokenKeepRead | undefined {
  const read = tokenKeepRanking(live, keepRate, anchors, pageSize);
  if (read === undefined) return undefined;
  const { ranges, count } = topPagesRanges(read, live, bounds, queries, group, 'max', pageSize);
  return { ranges, count, pages: read.pages };
}
