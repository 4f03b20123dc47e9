import type { EvictionPolicy, KVCache } from '@lethe/kv-cache';
import {
  type DecoderModel,
  type FinishReason,
  GenerationSession,
  type SamplingOptions,
  type StopConditions,
  sampleToken,
  stopReason,
  validateSampling,
  validateStop,
} from '@lethe/model';
import { Rng } from '@lethe/tensor';

/** Options of {@link streamGeneration}. */
export interface StreamGenerationOptions {
  readonly model: DecoderModel;
  /** Prompt token ids (BOS included where the tokenizer has one). */
  readonly prompt: Int32Array;
  readonly maxNewTokens: number;
  /** Eviction policy (`undefined`: full cache). */
  readonly eviction: EvictionPolicy | undefined;
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
  readonly cache: KVCache;
  readonly finishReason: FinishReason;
  /** Decode tokens per second (prefill excluded). */
  readonly tokensPerSecond: number;
}

/**
 * Generates one sequence token by token, calling `onToken` as each is sampled, exactly as
 * `generate()` of `@lethe/model` does for a batch of one with stream id 0 (same session, same
 * sampling stream `new Rng(seed).fork('sample-0')`, same stop rules), and returns its cache so
 * the caller can show what the eviction policy kept.
 *
 * @throws LetheError `E_ARG` for bad sampling or stop options.
 */
export async function streamGeneration(
  options: StreamGenerationOptions,
): Promise<StreamGenerationResult> {
  const { model, prompt, sampling, stop } = options;
  validateSampling(sampling);
  validateStop(stop, model.config.vocab_size);
  const session = new GenerationSession({
    model,
    eviction: options.eviction,
    seed: options.seed,
    streamIds: [0],
  });
  const sampler = new Rng(options.seed).fork('sample-0');
  let out = await session.prefill([prompt]);
  const tokens: number[] = [];
  const start = performance.now();
  let finishReason: FinishReason | undefined;
  for (;;) {
    const { token } = sampleToken(out.logits[0]!, sampling, sampler);
    tokens.push(token);
    options.onToken?.(token);
    finishReason =
      stopReason(tokens, stop) ?? (tokens.length >= options.maxNewTokens ? 'length' : undefined);
    if (finishReason !== undefined) break;
    out = await session.step([0], Int32Array.of(token));
  }
  const seconds = (performance.now() - start) / 1000;
  const fed = new Int32Array(prompt.length + tokens.length - 1);
  fed.set(prompt, 0);
  fed.set(tokens.slice(0, -1), prompt.length);
  return {
    tokens: Int32Array.from(tokens),
    fed,
    cache: session.caches[0]!,
    finishReason,
    tokensPerSecond: seconds > 0 ? (tokens.length - 1) / seconds : 0,
  };
}
