import type { EvictionPolicy, KVCacheStore } from '@lethe/kv-cache';
import {
  type DecoderModel,
  type FinishReason,
  generate,
  type SamplingOptions,
  type StopConditions,
} from '@lethe/model';

/** Options of {@link streamGeneration}. */
export interface StreamGenerationOptions {
  readonly model: DecoderModel;
  /** Prompt token ids (BOS included where the tokenizer has one). */
  readonly prompt: Int32Array;
  readonly maxNewTokens: number;
  /** Eviction policy (`undefined`: full cache). */
  readonly eviction: EvictionPolicy | undefined;
  /** Its ceiling (`PolicySet.ceiling`): the prompt goes in in chunks that never pass it. */
  readonly ceiling?: number;
  readonly sampling: SamplingOptions;
  readonly seed: number;
  readonly stop: StopConditions;
  /** Called with every sampled token, as it is sampled. */
  readonly onToken?: (token: number) => void;
}

/** Outcome of {@link streamGeneration}. */
export interface StreamGenerationResult {
  /** Generated tokens (stop sequence included). */
  readonly tokens: Int32Array;
  /** The tokens the cache saw, by position: the prompt, then every generated token but the last. */
  readonly fed: Int32Array;
  /** The sequence's cache after the last step. */
  readonly cache: KVCacheStore;
  readonly finishReason: FinishReason;
  /** Decode tokens per second (prefill excluded). */
  readonly tokensPerSecond: number;
}

/**
 * Generates one sequence with `generate()` of `@lethe/model` (stream id 0), calling `onToken`
 * as each token is sampled, and returns its cache so the caller can show what the eviction
 * policy kept.
 *
 * @throws LetheError `E_ARG` for bad sampling or stop options.
 */
export async function streamGeneration(
  options: StreamGenerationOptions,
): Promise<StreamGenerationResult> {
  const { prompt } = options;
  const result = await generate({
    model: options.model,
    prompts: [prompt],
    streamIds: [0],
    maxNewTokens: options.maxNewTokens,
    eviction: options.eviction,
    ceiling: options.ceiling,
    sampling: options.sampling,
    seed: options.seed,
    stop: options.stop,
    onToken: (event) => {
      options.onToken?.(event.token);
      return true;
    },
  });
  const tokens = result.tokens[0]!;
  const fed = new Int32Array(prompt.length + tokens.length - 1);
  fed.set(prompt, 0);
  fed.set(tokens.subarray(0, -1), prompt.length);
  return {
    tokens,
    fed,
    cache: result.caches[0]!,
    finishReason: result.finishReasons[0]!,
    tokensPerSecond: result.stats.tokensPerSecond,
  };
}
