import type { KVCache } from '@lethe/kv-cache';

/**
 * What one sequence's cache held and read while its tokens were predicted. An *event* is one
 * predicted token: the prefill's last position, then every decode step.
 */
export interface ReadTrace {
  /** Largest number of live entries ever held, over layers and KV heads (`CacheStats.peakTotal`). */
  readonly peakTotal: number;
  /**
   * Entries the attention of each event read, summed over layers and KV heads: the whole
   * prompt for the prefill event; the live entries left by earlier evictions plus the new token
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

  /** The prefill event: a dense read of `prefixLength` tokens. */
  prefill(prefixLength: number): void {
    this.read.push(prefixLength * this.entriesPerToken);
    this.available.push(prefixLength * this.entriesPerToken);
  }

  /**
   * A decode step about to run on `cache`, whose full-cache prefix (the new token included)
   * is `prefixLength` tokens.
   */
  step(cache: KVCache, prefixLength: number): void {
    this.read.push(liveTotal(cache) + this.entriesPerToken);
    this.available.push(prefixLength * this.entriesPerToken);
  }

  /** The finished trace, with the cache's peak. */
  finish(cache: KVCache): ReadTrace {
    return { peakTotal: cache.stats().peakTotal, read: this.read, available: this.available };
  }
}

/** Live entries of `cache` over every layer and KV head. */
export function liveTotal(cache: KVCache): number {
  let total = 0;
  for (let layer = 0; layer < cache.geometry.layers; layer++) {
    for (const live of cache.liveCounts(layer)) total += live;
  }
  return total;
}
