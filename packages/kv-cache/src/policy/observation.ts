/**
 * What a policy may read about one layer of the cache when it decides. Everything is a plain
 * typed array so that a runtime other than Lethe's can fill it.
 *
 * Live entries of KV head `h` are `0 .. liveCounts[h] - 1`, in increasing token position;
 * per-entry arrays are laid out `[kvHeads, maxLive]` (row `h` at offset `h * maxLive`), entries
 * past `liveCounts[h]` are padding (position -1, zeros elsewhere).
 */
export interface LayerObservation {
  /** Layer index. */
  readonly layer: number;
  /** Number of KV heads. */
  readonly kvHeads: number;
  /** Number of query heads (a multiple of `kvHeads`). */
  readonly queryHeads: number;
  /** Key/value vector width. */
  readonly headDim: number;
  /** Tokens processed so far (the position the next token will get). */
  readonly step: number;
  /**
   * Tokens the runtime appends before the next round (default 1: a decode step; a prefill chunk
   * of `k` tokens: `k`). A policy under a capacity keeps room for them: `kept − (incoming − 1)`
   * entries (see `roomyKeep`), so a chunked prompt stays under its ceiling without a round per
   * token. A runtime sets it only where the set has a ceiling (`PolicySet.ceiling`).
   */
  readonly incoming?: number;
  /** Live entries per KV head, `[kvHeads]`. */
  readonly liveCounts: Int32Array;
  /** Row stride of the per-entry arrays: `max(liveCounts)`. */
  readonly maxLive: number;
  /** Original token position of each entry, `[kvHeads, maxLive]`, -1 for padding. */
  readonly positions: Int32Array;
  /** Tokens processed since each entry was written, `[kvHeads, maxLive]`. */
  readonly ages: Int32Array;
  /** Per-entry gate (GSA), `[kvHeads, maxLive]`, when the cache stores gates. */
  readonly gates?: Float32Array;
  /** Keys after RoPE, `[kvHeads, maxLive, headDim]`, when the policy asks for them. */
  readonly keys?: Float32Array;
  /** Values, `[kvHeads, maxLive, headDim]`, when the policy asks for them. */
  readonly values?: Float32Array;
  /** Number of recent queries in `attention` and `queries` (≤ the policy's `attentionWindow`). */
  readonly window: number;
  /** Queries after RoPE of the last `window` tokens, `[window, queryHeads, headDim]`, oldest first. */
  readonly queries?: Float32Array;
  /**
   * Softmax attention of each of the last `window` queries over the live entries of its KV head,
   * `[window, queryHeads, maxLive]`, causal (an entry newer than the query gets 0), padding 0;
   * float32 weights with the cache attention's arithmetic (`attentionWeights`).
   */
  readonly attention?: Float32Array;
  /** Attention each entry received, summed over all queries that saw it and over the query heads of its group, `[kvHeads, maxLive]`. */
  readonly accumulatedAttention?: Float32Array;
  /** Number of queries that saw each entry (for mean observed attention), `[kvHeads, maxLive]`. */
  readonly attentionCounts?: Float32Array;
  /** Channel-wise key bounds of every page of every head (Quest's metadata), when asked for. */
  readonly pageKeyBounds?: ObservedPageBounds;
  /** Final hidden state of the newest token, `[hiddenSize]`. */
  readonly hidden?: Float32Array;
}

/**
 * The page key bounds of every KV head of a layer: page `p` of head `h` = its live entries
 * `[p·pageSize, (p+1)·pageSize)`; head `h` has `ceil(liveCounts[h] / pageSize)` pages.
 * Per-page arrays are laid out `[kvHeads, maxPages, headDim]` (head `h` at offset
 * `h · maxPages · headDim`), pages past a head's own count are zero padding.
 */
export interface ObservedPageBounds {
  /** Live entries per page (the cache geometry's `pageSize`). */
  readonly pageSize: number;
  /** Row stride in pages: `ceil(maxLive / pageSize)`. */
  readonly maxPages: number;
  /** Channel-wise minimum of each page's keys, `[kvHeads, maxPages, headDim]`. */
  readonly min: Float32Array;
  /** Channel-wise maximum of each page's keys, `[kvHeads, maxPages, headDim]`. */
  readonly max: Float32Array;
}

/** Which optional observation fields a policy reads; the runtime computes only these. */
export interface ObservationNeeds {
  /** How many recent queries' attention (and the queries themselves) to provide; 0 for none. */
  readonly attentionWindow: number;
  /**
   * Only the queries since this layer's previous round (still at most `attentionWindow`): for a
   * policy that folds each query's attention in once (NAMM's spectrograms), so that a runtime
   * running rounds more often than the window does not compute the same rows again. Default
   * false: the last `attentionWindow` queries at every round.
   */
  readonly attentionSinceLastRound?: boolean;
  /** Provide `accumulatedAttention` and `attentionCounts` (the runtime must track them every step). */
  readonly accumulatedAttention: boolean;
  /** Provide `keys`. */
  readonly keys: boolean;
  /** Provide `values`. */
  readonly values: boolean;
  /** Provide `hidden`. */
  readonly hidden: boolean;
  /** Provide `pageKeyBounds` (default false): the page key bounds a cache maintains, not the keys. */
  readonly pageKeyBounds?: boolean;
}

/** Needs of a policy that reads only positions and ages. */
export const NO_NEEDS: ObservationNeeds = Object.freeze({
  attentionWindow: 0,
  accumulatedAttention: false,
  keys: false,
  values: false,
  hidden: false,
});
