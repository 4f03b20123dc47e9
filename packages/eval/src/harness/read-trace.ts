import type { KVCacheStore } from '@lethe/kv-cache';

/**
 * What one sequence's cache held and read while its tokens were predicted. An *event* is one
 * predicted token: the prefill's last position, then every decode step.
 */
export interface ReadTrace {
  /** Largest number of live entries ever held, over layers and KV heads (`CacheStats.peakTotal`). */
  readonly peakTotal: number;
  /**
   * Entries the attention of each event read, summed over layers and KV heads: the whole
   * prompt for the prefill event (with a chunked prefill, the live entries before the last
   * chunk plus that chunk); the live entries left by earlier evictions plus the new token
   * for a decode step.
   */
  readonly read: readonly number[];
  /** Entries a full cache would have read at each event (prefix length × layers × KV heads). */
  readonly available: readonly number[];
}

/** Records a {@link ReadTrace} for one sequence as its session runs. */
export class ReadRecorder {
  private readonly read: number[] = [];
  private readonly available: number[] = [];

  /** @param entriesPerToken Layers × KV heads: the entries one token adds to a cache. */
  constructor(private readonly entriesPerToken: number) {}

  /**
   * The prefill event: the read of the prompt's last token, `prefixLength` tokens in. With a
   * chunked prefill its chunk started at prompt position `chunkStart` on a cache holding
   * `liveBefore` entries, so it read those plus the chunk's tokens up to itself; a prompt
   * prefilled whole (the defaults) reads densely.
   */
  prefill(prefixLength: number, liveBefore = 0, chunkStart = 0): void {
    this.read.push(liveBefore + (prefixLength - chunkStart) * this.entriesPerToken);
    this.available.push(prefixLength * this.entriesPerToken);
  }
  /**
   * A decode step about to run on `cache`, whose full-cache prefix (the new token included)
   * is `prefixLength` tokens.
   */
  step(cache: KVCacheStore, prefixLength: number): void {
    this.read.push(liveTotal(cache) + this.entriesPerToken);
    this.available.push(prefixLength * this.entriesPerToken);
  }

  /** The finished trace, with the cache's peak. */
  finish(cache: KVCacheStore): ReadTrace {
    return { peakTotal: cache.stats().peakTotal, read: this.read, available: this.available };
  }
}

/** Live entries of `cache` over every layer and KV head. */
export function liveTotal(cache: KVCacheStore): number {
  let total = 0;
  for (let layer = 0; layer < cache.geometry.layers; layer++) {
    for (const live of cache.liveCounts(layer)) total += live;
  }
  return total;
}
