import type { KVCacheStore } from '@lethe/kv-cache';

/**
 * What one sequence's cache held and read while its tokens were predicted. An *event* is one
 * predicted token: the prefill's last position, then every decode step.
 */
export interface ReadTrace {
  /** Largest number of live entries ever held, over layers and KV heads (`CacheStats.peakTotal`). */
  readonly peakTotal: number;
  /**
   * Entries each event's attention could read, summed over layers and KV heads: the whole prompt
   * for the prefill event (with a chunked prefill, the live entries before the last chunk plus
   * that chunk); the live entries left by earlier evictions plus the new token for a decode step.
   */
  readonly live: readonly number[];
  /**
   * Entries the attention of each event read, summed over layers and KV heads: `live` for the
   * prefill event; for a decode step, the cached entries the step read — every live one unless a
   * read selector (Quest) or a compute policy's κ restricted the read, as the runtime counts them
   * (`DecodeReads` of `@lethe/model`) — plus the new token.
   */
  readonly read: readonly number[];
  /** Entries a full cache would have read at each event (prefix length × layers × KV heads). */
  readonly available: readonly number[];
}

/**
 * Records a {@link ReadTrace} for one sequence as its session runs. A decode step's read is the
 * growth of the runtime's running count of decode reads (`DecodeReads.entries`, summed over
 * layers and KV heads) from the start of the step to the start of the next one, or to the end.
 */
export class ReadRecorder {
  private readonly live: number[] = [];
  private readonly read: number[] = [];
  private readonly available: number[] = [];
  /** The decode reads counted when the step now running began; undefined between steps. */
  private readBefore: number | undefined;

  /** @param entriesPerToken Layers × KV heads: the entries one token adds to a cache. */
  constructor(private readonly entriesPerToken: number) {}

  /**
   * The prefill event: the read of the prompt's last token, `prefixLength` tokens in. With a
   * chunked prefill its chunk started at prompt position `chunkStart` on a cache holding
   * `liveBefore` entries, so it read those plus the chunk's tokens up to itself; a prompt
   * prefilled whole (the defaults) reads densely.
   */
  prefill(prefixLength: number, liveBefore = 0, chunkStart = 0): void {
    const read = liveBefore + (prefixLength - chunkStart) * this.entriesPerToken;
    this.live.push(read);
    this.read.push(read);
    this.available.push(prefixLength * this.entriesPerToken);
  }

  /**
   * A decode step about to run on `cache`, whose full-cache prefix (the new token included) is
   * `prefixLength` tokens, with `readSoFar` the entries the sequence's decode steps have read so
   * far (`DecodeReads.entries` of `@lethe/model`: `GenerationSession.decodeReads`, or
   * `generate()`'s `StepEvent.reads`). Completes the previous step's read.
   */
  step(cache: KVCacheStore, prefixLength: number, readSoFar: number): void {
    this.settle(readSoFar);
    this.readBefore = readSoFar;
    this.live.push(liveTotal(cache) + this.entriesPerToken);
    this.available.push(prefixLength * this.entriesPerToken);
  }

  /**
   * The finished trace, with the cache's peak; `readSoFar` (the decode reads counted at the end)
   * completes the last step's read.
   */
  finish(cache: KVCacheStore, readSoFar: number): ReadTrace {
    this.settle(readSoFar);
    return {
      peakTotal: cache.stats().peakTotal,
      live: this.live,
      read: this.read,
      available: this.available,
    };
  }

  /** Records the read of the step now running, which ended with `readSoFar` counted. */
  private settle(readSoFar: number): void {
    if (this.readBefore === undefined) return;
    this.read.push(readSoFar - this.readBefore + this.entriesPerToken);
    this.readBefore = undefined;
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
