import type { CacheStats, KVCacheStore } from '@lethe/kv-cache';

/** What one generation run measured. Per-layer figures are for each sequence of the batch. */
export interface GenerationStats {
  /** Prompt tokens processed by prefill, summed over the batch. */
  readonly promptTokens: number;
  /** Tokens generated, summed over the batch. */
  readonly generatedTokens: number;
  /** Wall time of prefill, ms. */
  readonly prefillMs: number;
  /** Wall time of the decode loop (including eviction rounds), ms. */
  readonly decodeMs: number;
  /** Generated tokens per second of decode wall time (all sequences together). */
  readonly tokensPerSecond: number;
  /** Cache statistics of each sequence at the end (live, peak, bytes, eviction rounds per layer). */
  readonly caches: readonly CacheStats[];
}

/** Collects {@link GenerationStats} from finished caches and timings. */
export function collectStats(
  caches: readonly KVCacheStore[],
  timing: { promptTokens: number; generatedTokens: number; prefillMs: number; decodeMs: number },
): GenerationStats {
  const seconds = timing.decodeMs / 1000;
  return {
    ...timing,
    tokensPerSecond: seconds > 0 ? timing.generatedTokens / seconds : 0,
    caches: caches.map((c) => c.stats()),
  };
}
