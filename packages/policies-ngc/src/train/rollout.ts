import type { FinishReason } from '@lethe/model';

/**
 * One NGC eviction round of one layer as a rollout took it: enough to rebuild what every later
 * query saw (the replay mask) and to recompute the round's log-probability on the autograd graph.
 */
export interface EvictionRoundRecord {
  /** Layer index. */
  readonly layer: number;
  /** Tokens in the layer when the round ran; queries of tokens `≥ step` no longer see what it dropped. */
  readonly step: number;
  /** Token positions of the entries live before the round, increasing. */
  readonly positions: Int32Array;
  /** Number of recent queries whose attention scored the entries. */
  readonly window: number;
  /** Entries per block. */
  readonly blockSize: number;
  /** Kept blocks in the order Gumbel-top-k drew them (σ of eq. 2). */
  readonly order: Int32Array;
  /** log p(σ | s) (eq. 2) as the rollout computed it, float64 on the host. */
  readonly logProb: number;
}

/** One generated sequence of an NGC rollout, self-contained (plain typed arrays, transferable). */
export interface NgcRollout {
  /** Prompt tokens. */
  readonly prompt: Int32Array;
  /** Generated tokens (the stop sequence included). */
  readonly tokens: Int32Array;
  /** Log-probability the sampler gave each generated token (temperature applied). */
  readonly tokenLogProbs: Float32Array;
  /** Why generation ended. */
  readonly finishReason: FinishReason;
  /** Every eviction round of every layer, in the order they ran (empty without eviction). */
  readonly rounds: readonly EvictionRoundRecord[];
  /** Eviction rate ε the rollout ran with (0: no eviction). */
  readonly evictionRate: number;
  /** Most KV entries held at once, summed over layers and KV heads (eq. 7's peak). */
  readonly peakEntries: number;
}

/** Length of the replayed input: the prompt and every generated token but the last (never fed). */
export function replayLength(rollout: Pick<NgcRollout, 'prompt' | 'tokens'>): number {
  return rollout.prompt.length + rollout.tokens.length - 1;
}
