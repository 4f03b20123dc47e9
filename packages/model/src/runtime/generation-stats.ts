import type { CacheStats, KVCacheStore } from '@lethe/kv-cache';

/** What one generation run measured. Per-layer figures are for each sequence of the batch. */
export interface GenerationStats {
  /** Prompt tokens processed by prefill, summed over the batch. */
  readonly promptTokens: number;
  /** Tokens generated, summed over the batch. */
  readonly generatedTokens: number;
  /**
   * Tokens the decode loop fed through the model, summed over the batch: each sequence's
   * generated tokens but its last (its first is sampled from prefill's logits, and each fed token
   * yields the next).
   */
  readonly decodedTokens: number;
  /** Wall time of prefill, ms. */
  readonly prefillMs: number;
  /** Wall time of the decode loop (including eviction rounds), ms. */
  readonly decodeMs: number;
  /**
   * Decode throughput: {@link decodedTokens} per second of decode wall time (all sequences
   * together), so the numerator counts the work the decode loop timed.
   */
  readonly tokensPerSecond: number;
  /** Cache statistics of each sequence at the end (live, peak, bytes, eviction rounds per layer). */
  readonly caches: readonly CacheStats[];
}

/** Collects {@link GenerationStats} from finished caches and timings. */
export function collectStats(
  caches: readonly KVCacheStore[],
  timing: {
    promptTokens: number;
    generatedTokens: number;
    decodedTokens: number;
    prefillMs: number;
    decodeMs: number;
  },
): GenerationStats {
  const seconds = timing.decodeMs / 1000;
  return {
    ...timing,
    tokensPerSecond: seconds > 0 ? timing.decodedTokens / seconds : 0,
    caches: caches.map((c) => c.stats()),
  };
}
