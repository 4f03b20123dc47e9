/** What causal attention reads of one live entry. */
export interface KeyedEntry {
  readonly key: Float32Array;
  readonly position: number;
}

/**
 * Causal attention of one query (`headDim` floats of `queries` from `offset`) at token position
 * `position` over `entries` (one KV head, increasing positions), as the `KVCacheStore` contract
 * defines it: softmax with scale `1/√headDim`, logits and softmax in float64, over the entries
 * at positions ≤ `position`. Returns one probability per entry the query sees (a prefix).
 */
export function causalAttention(
  entries: readonly KeyedEntry[],
  queries: Float32Array,
  offset: number,
  position: number,
): number[] {
  const seen = entries.filter((entry) => entry.position <= position);
  if (seen.length === 0) return [];
  const headDim = seen[0]!.key.length;
  const scale = 1 / Math.sqrt(headDim);
  const logits = seen.map(({ key }) => {
    let dot = 0;
    for (let c = 0; c < headDim; c++) dot += queries[offset + c]! * key[c]!;
    return dot * scale;
  });
  const max = Math.max(...logits);
  const weights = logits.map((logit) => Math.exp(logit - max));
  const total = weights.reduce((sum, w) => sum + w, 0);
  return weights.map((w) => w / total);
}
