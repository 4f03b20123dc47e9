import { LetheError } from '@lethe/core';
import type { KVCacheStore, ReadSelector } from '@lethe/kv-cache';

/**
 * Asks each sequence's read selector which pages its new token reads at one layer: for sequence
 * `b` with selector `s = selectors[b]`, `s.selectPages(caches[b].observe(layer, s.needs), query_b)`
 * with `query_b` its own copy of row `b` of `queries`. Runs before the caches are mutated, so the
 * observation is the cache as the token finds it.
 *
 * @param selectors one per sequence; undefined: the sequence reads densely.
 * @param queries the new tokens' queries after RoPE, `[B, queryHeads, headDim]` (one token per
 *   sequence), on the host.
 * @returns per sequence the pages per KV head, or undefined for a dense read. The page lists
 *   are checked where they are applied (`batchCachedLayer`).
 * @throws LetheError `E_ARG` naming `readSelector.selectPages[b][layer]` when the selector
 *   returns something other than an array or undefined.
 */
export function selectReadPages(
  caches: readonly KVCacheStore[],
  layer: number,
  selectors: readonly (ReadSelector | undefined)[],
  queries: Float32Array,
): (readonly Int32Array[] | undefined)[] {
  const rowSize = queries.length / caches.length;
  return caches.map((cache, b) => {
    const selector = selectors[b];
    if (selector === undefined) return undefined;
    const observation = cache.observe(layer, selector.needs);
    const pages = selector.selectPages(observation, queries.slice(b * rowSize, (b + 1) * rowSize));
    if (pages !== undefined && !Array.isArray(pages)) {
      throw new LetheError(
        'E_ARG',
        'must return one Int32Array of pages per KV head, or undefined',
        `readSelector.selectPages[${b}][${layer}]`,
      );
    }
    return pages;
  });
}
