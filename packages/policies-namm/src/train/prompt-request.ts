import type { StopConditions } from '@lethe/model';

/** One prompt to complete greedily, with its own length limit and stop conditions. */
export interface NammPromptRequest {
  /** Prompt tokens. */
  readonly prompt: Int32Array;
  /** Most tokens generated. */
  readonly maxNewTokens: number;
  /** When generation stops. */
  readonly stop: StopConditions;
}

/** A greedy completion and how much of the full cache it held. Plain data (transferable). */
export interface NammCompletion {
  /** Generated tokens (a stop token or sequence included). */
  readonly tokens: Int32Array;
  /**
   * Live KV entries at the end, averaged over layers and KV heads, relative to the full cache's
   * (every token fed: prompt and generated tokens but the last): 1 when nothing was evicted.
   */
  readonly liveRatio: number;
  /** The largest live count the cache ever held (its pre-eviction peak), relative likewise. */
  readonly peakRatio: number;
}
