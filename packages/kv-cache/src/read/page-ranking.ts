import { topKIndices } from '../selection/top-k';
import type { PageKeyBounds } from './page-key-bounds';
import { type QuestGroupReduce, questPageScores, questTopPages } from './quest-bound';

/**
 * A KV head's read decided by ranking pages with Quest's bound, described without the query or
 * the keys, so that whoever holds them (the host, or a device cache's ranking pass) can run it:
 * of the head's `live` entries it reads `[0, sinks)`, `[middleEnd, live)` and, of the middle
 * `[sinks, middleEnd)`, the entries of the `pages` best pages among the pages that hold a middle
 * entry (page `p` = live entries `[p·pageSize, (p+1)·pageSize)`), ranked by
 * `questPageScores` of the token's query (higher first, ties to the older page). See
 * {@link topPagesRanges} for the host's run of it.
 */
export interface TopPagesRead {
  /** Oldest live entries always read. */
  readonly sinks: number;
  /** Start of the newest entries always read (`sinks ≤ middleEnd ≤ live`). */
  readonly middleEnd: number;
  /** Pages chosen among the candidate pages (fewer than there are candidates). */
  readonly pages: number;
}

/** A layer's ranked reads: per KV head a {@link TopPagesRead}, or undefined for a dense read. */
export interface PageRanking {
  /** How the bounds of a GQA group's query heads combine. */
  readonly reduce: QuestGroupReduce;
  readonly heads: readonly (TopPagesRead | undefined)[];
}

/** The candidate pages `[firstPage, endPage)` of `read`: those holding a middle entry. */
export function candidatePages(
  read: TopPagesRead,
  pageSize: number,
): { firstPage: number; endPage: number } {
  return {
    firstPage: Math.floor(read.sinks / pageSize),
    endPage: Math.ceil(read.middleEnd / pageSize),
  };
}

/**
 * The entries `read` takes when `chosen` (ascending indices from its first candidate page) are
 * its chosen pages: the sinks, each chosen page's middle entries and the newest entries, as
 * sorted entry ranges with adjacent ones merged, and their count.
 */
export function chosenPageRanges(
  read: TopPagesRead,
  live: number,
  chosen: Int32Array,
  pageSize: number,
): { ranges: Int32Array; count: number } {
  const { sinks, middleEnd } = read;
  const { firstPage } = candidatePages(read, pageSize);
  const out = new Int32Array(2 * (chosen.length + 2));
  let length = 0;
  const add = (start: number, end: number): void => {
    if (start >= end) return;
    if (length > 0 && out[length - 1] === start) out[length - 1] = end;
    else {
      out[length] = start;
      out[length + 1] = end;
      length += 2;
    }
  };
  add(0, sinks);
  let count = sinks + live - middleEnd;
  for (let i = 0; i < chosen.length; i++) {
    const page = firstPage + chosen[i];
    const start = Math.max(sinks, page * pageSize);
    const end = Math.min(middleEnd, (page + 1) * pageSize);
    add(start, end);
    count += end - start;
  }
  add(middleEnd, live);
  return { ranges: out.subarray(0, length), count };
}

/**
 * The most entries `read` can take of a head of `live` entries: the anchors plus its `pages`
 * largest candidate pages' middle entries (what a device sizes its attention launch by).
 */
export function topPagesMaxRead(read: TopPagesRead, live: number, pageSize: number): number {
  return Math.min(live, read.sinks + (live - read.middleEnd) + read.pages * pageSize);
}

/**
 * Runs `read` on the host: ranks its candidate pages by `questPageScores` of the group's queries
 * reduced by `reduce` (with `'max'` through `questTopPages`, the SIMD kernel where it runs), takes
 * the best `read.pages` (ties to the older page) and returns the entries read
 * ({@link chosenPageRanges}). Unchecked, as `questPageScores`.
 *
 * @param bounds the head's page bounds (`KVCacheStore.pageKeyBounds`).
 * @param queries the group's query heads, `[group, headDim]`, after RoPE.
 */
export function topPagesRanges(
  read: TopPagesRead,
  live: number,
  bounds: PageKeyBounds,
  queries: Float32Array,
  group: number,
  reduce: QuestGroupReduce,
  pageSize: number,
): { ranges: Int32Array; count: number } {
  const { firstPage, endPage } = candidatePages(read, pageSize);
  let chosen: Int32Array = new Int32Array(0);
  if (read.pages > 0) {
    chosen =
      reduce === 'max'
        ? questTopPages({ bounds, queries, group, firstPage, endPage }, read.pages)
        : topKIndices(
            questPageScores(bounds, queries, group, reduce, firstPage, endPage),
            read.pages,
          );
  }
  return chosenPageRanges(read, live, chosen, pageSize);
}
