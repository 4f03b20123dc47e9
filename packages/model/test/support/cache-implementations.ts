import { type CacheStats, KVCache, type KVCacheOptions, type KVCacheStore } from '@lethe/kv-cache';
import { UnpagedCache } from './unpaged-cache';

/** Makes a cache from options: what `SessionOptions.createCache` takes. */
export type CacheFactory = (options: KVCacheOptions) => KVCacheStore;

/** The paged `KVCache`. */
export const pagedCache: CacheFactory = (options) => new KVCache(options);

/** The test-only {@link UnpagedCache}. */
export const unpagedCache: CacheFactory = (options) => new UnpagedCache(options);

/**
 * Both implementations of the `KVCacheStore` contract as `[name, factory]` rows for
 * `describe.each` / `it.each`: every test run over it must pass for each.
 */
export const CACHE_IMPLEMENTATIONS: [string, CacheFactory][] = [
  ['KVCache', pagedCache],
  ['unpaged', unpagedCache],
];

/** `cache` as a `KVCache`, for a test that reads class-only members (replay masks); throws otherwise. */
export function asKVCache(cache: KVCacheStore | undefined): KVCache {
  if (!(cache instanceof KVCache)) throw new Error('expected the default KVCache');
  return cache;
}

/**
 * The `CacheStats` fields every implementation must agree on given the same calls: entry
 * counts, peaks and rounds (bytes and pages describe each implementation's own storage).
 */
export function entryCounts(stats: CacheStats) {
  const { livePerLayer, livePerHead, peakPerLayer, liveTotal, peakTotal, evictionRounds } = stats;
  return { livePerLayer, livePerHead, peakPerLayer, liveTotal, peakTotal, evictionRounds };
}
