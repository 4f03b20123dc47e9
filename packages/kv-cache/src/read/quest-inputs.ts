import type { PageKeyBounds } from './page-key-bounds';

/**
 * What Quest scores for one KV head: its page bounds, the queries of the GQA group reading it,
 * and the pages `[firstPage, endPage)` to score (unchecked: the scoring functions are a hot path).
 */
export interface QuestInputs {
  /** The KV head's page bounds, `[pages, headDim]`. */
  readonly bounds: PageKeyBounds;
  /** The group's query vectors, `[group, headDim]`. */
  readonly queries: Float32Array;
  /** Query heads per KV head. */
  readonly group: number;
  readonly firstPage: number;
  readonly endPage: number;
}
