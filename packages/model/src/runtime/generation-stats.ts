import type { CacheStats, KVCacheStore } from '@lethe/kv-cache';
import type { ComputeUsage } from './compute-usage';

/**
 * Cached entries one sequence's decode steps read, summed over its steps, layers and KV heads.
 * `entries / live` is the realised read fraction: 1 for dense decoding, about κ under a
 * `tokenKeep` κ (see `tokenKeepRead` of `@lethe/kv-cache` for the exact count).
 */
export interface DecodeReads {
  /** Entries the attention read from the cache (each token's own key not included). */
  readonly entries: number;
  /** Entries the cache held when they were read: what dense reads would have read. */
  readonly live: number;
}

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
  /** What each sequence's decode steps read of its cache (prefill not included). */
  readonly reads: readonly DecodeReads[];
  /**
   * The compute each sequence's decode steps asked for (the compute policy's realised per-axis
   * averages; `steps` 0 and all 1 without a compute policy).
   */
  readonly compute: readonly ComputeUsage[];
  /**
   * KV refreshes each sequence ran (SOL's periodic refresh, a compute policy's `refreshEvery`:
   * one dense re-prefill of the last `refreshEvery` fed tokens per `refreshEvery` decode steps; all
   * 0 without it). Their time is part of {@link decodeMs}; their tokens are not in
   * {@link decodedTokens}, `reads` or `compute`.
   */
  readonly refreshes: readonly number[];
}

const DENSE_USAGE: ComputeUsage = Object.freeze({
  steps: 0,
  tokenKeep: 1,
  mlpInputKeep: 1,
  precision: 1,
});

/**
 * Collects {@link GenerationStats} from finished caches, timings, and the decode reads, compute
 * usage and KV refreshes of each sequence (default: none recorded).
 */
export function collectStats(
  caches: readonly KVCacheStore[],
  timing: {
    promptTokens: number;
    generatedTokens: number;
    decodedTokens: number;
    prefillMs: number;
    decodeMs: number;
  },
  reads: readonly DecodeReads[] = caches.map(() => ({ entries: 0, live: 0 })),
  compute: readonly ComputeUsage[] = caches.map(() => DENSE_USAGE),
  refreshes: readonly number[] = caches.map(() => 0),
): GenerationStats {
  const seconds = timing.decodeMs / 1000;
  return {
    ...timing,
    tokensPerSecond: seconds > 0 ? timing.decodedTokens / seconds : 0,
    caches: caches.map((c) => c.stats()),
    reads,
    compute,
    refreshes,
  };
}
