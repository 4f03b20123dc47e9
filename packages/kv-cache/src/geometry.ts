/** Shape of a KV cache: one live set per (layer, KV head), stored in pages of `pageSize` slots. */
export interface CacheGeometry {
  /** Number of transformer layers. */
  readonly layers: number;
  /** Number of KV heads per layer (grouped-query attention shares each among query heads). */
  readonly kvHeads: number;
  /** Width of one key (and one value) vector. */
  readonly headDim: number;
  /** Slots per storage page; eviction by block and Quest page reads align to it. Default 16. */
  readonly pageSize: number;
}

/**
 * Slots that are never evicted: the attention sinks (entries at token positions below `sinks`)
 * and the `window` most recently appended ones.
 */
export interface Anchors {
  /** Number of attention-sink tokens (lowest positions) always kept. Default 0. */
  readonly sinks: number;
  /** Number of most recent tokens always kept. Default 0. */
  readonly window: number;
}
