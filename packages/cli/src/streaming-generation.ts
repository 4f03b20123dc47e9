import type { KVCacheStore, PolicySet } from '@lethe/kv-cache';
import {
  type ComputeUsage,
  type DecodeReads,
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
  /**
   * The policies (`{}`: full cache): an eviction policy with its ceiling (`PolicySet.ceiling`:
   * the prompt goes in in chunks that never pass it), a read selector, a compute policy.
   */
  readonly policies: PolicySet;
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
  /** What the decode steps read of the cache. */
  readonly reads: DecodeReads;
  /** The compute the decode steps asked for (`steps` 0 without a compute policy). */
  readonly compute: ComputeUsage;
}

/**
 * Generates one sequence with `generate()` of `@lethe/model` (stream id 0) under `policies`,
 * calling `onToken` as each token is sampled, and returns its cache so the caller can show what
 * the eviction policy kept, with what its steps read and the compute they asked for.
 *
 * @throws LetheError `E_ARG` for bad sampling or stop options.
 */
export async function streamGeneration(
  options: StreamGenerationOptions,
): Promise<StreamGenerationResult> {
  const { prompt, policies } = options;
  const result = await generate({
    model: options.model,
    prompts: [prompt],
    streamIds: [0],
    maxNewTokens: options.maxNewTokens,
    eviction: policies.eviction,
    ceiling: policies.ceiling,
    readSelector: policies.readSelector,
    compute: policies.compute,
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
    reads: result.stats.reads[0]!,
    compute: result.stats.compute[0]!,
  };
}
