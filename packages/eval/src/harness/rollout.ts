import type { PolicySet } from '@lethe/kv-cache';
import {
  type DecoderModel,
  type EvictionRoundEvent,
  type FinishReason,
  generate,
  releaseCache,
  type SamplingOptions,
  type StopConditions,
} from '@lethe/model';
import { requireArray, requireFunction, requireObject } from './arguments';
import type { Clock } from './clock';
import { liveTotal, ReadRecorder, type ReadTrace } from './read-trace';

/** Options of {@link rollout}. */
export interface RolloutOptions {
  readonly model: DecoderModel;
  /** Prompts, one per sequence (token ids, BOS included where the tokenizer has one). */
  readonly prompts: readonly Int32Array[];
  /** Random-stream id of each sequence (sampling and eviction), independent of batching. */
  readonly streamIds: readonly number[];
  /** Upper bound on generated tokens per sequence. */
  readonly maxNewTokens: number;
  readonly sampling: SamplingOptions;
  /** Seed of the sampling and eviction streams. */
  readonly seed: number;
  readonly stop: StopConditions;
  /** Eviction policy, read selector and compute policy (none: the full cache). */
  readonly policies: PolicySet;
  /** Prefill chunk size (`undefined`: each prompt whole); see `SweepConfig.prefillChunk`. */
  readonly prefillChunk?: number;
  readonly clock: Clock;
  /** Checked between decode steps; an abort rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
  /** Sees every eviction round (e.g. to measure a policy's decisions), as `generate()`'s hook. */
  readonly onEvictionRound?: (event: EvictionRoundEvent) => void;
}

/** One generated sequence with its cache trace. */
export interface GeneratedSequence extends ReadTrace {
  /** Generated tokens (prompt excluded, stop sequence included). */
  readonly tokens: Int32Array;
  readonly finishReason: FinishReason;
}

/** Output of {@link rollout}. */
export interface RolloutBatch {
  readonly sequences: GeneratedSequence[];
  /** Tokens generated, over the batch. */
  readonly generatedTokens: number;
  /**
   * Tokens the model ran on, over the batch: every prompt token (prefill) and every token fed
   * back by a decode step — each generated token but a sequence's last. The work timed by
   * {@link RolloutBatch.elapsedMs}.
   */
  readonly processedTokens: number;
  /** Clock time of prefill and decode loop together, ms. */
  readonly elapsedMs: number;
}

/**
 * Generates a batch with `generate()` of `@lethe/model` (`seed` as both `seed` and
 * `samplingSeed`) while recording, per sequence, what its cache read at every predicted token
 * ({@link ReadTrace}: the decode reads the runtime counted, so a read selector's and a κ's
 * restrictions show) through `generate()`'s per-step hook, and the tokens the model ran on with
 * the clock time they took (prefill included: a sequence's first token is sampled from the
 * prefill's logits, so a decode span alone would count tokens whose work it does not contain).
 *
 * @throws LetheError `E_ARG` naming `options`, `model`, `prompts`, `policies` or `clock` when
 *   missing or of the wrong kind; `E_ARG` / `E_SHAPE` for bad options (as `generate()`); rejects
 *   with `signal.reason` when `signal` aborts.
 */
export async function rollout(options: RolloutOptions): Promise<RolloutBatch> {
  requireObject(options, 'options', 'a RolloutOptions object');
  requireObject(options.model, 'model', 'a DecoderModel');
  requireArray(options.prompts, 'prompts');
  requireObject(options.policies, 'policies', 'a PolicySet ({} for the full cache)');
  requireFunction(options.clock, 'clock', 'a clock () => milliseconds');
  const { model, prompts, clock } = options;
  const perToken = model.config.num_hidden_layers * model.config.num_key_value_heads;
  const recorders = prompts.map(() => new ReadRecorder(perToken));
  let decodeFed = 0;
  const result = await generate({
    model,
    prompts,
    streamIds: options.streamIds,
    maxNewTokens: options.maxNewTokens,
    sampling: options.sampling,
    seed: options.seed,
    stop: options.stop,
    eviction: options.policies.eviction,
    readSelector: options.policies.readSelector,
    compute: options.policies.compute,
    ceiling: options.policies.ceiling,
    prefillChunk: options.prefillChunk,
    // The prompt's last token is read in the chunk that reaches the end of its prompt.
    onPrefillChunk: ({ sequences, caches, start, lengths }) => {
      sequences.forEach((b, i) => {
        const length = prompts[b]!.length;
        if (start + lengths[i]! === length) {
          recorders[b]!.prefill(length, liveTotal(caches[b]!), start);
        }
      });
    },
    signal: options.signal,
    onEvictionRound: options.onEvictionRound,
    now: clock,
    // Before a step a cache holds every token but the one being fed, so the full-cache prefix
    // of the step (the new token included) is the cache length + 1.
    onStep: ({ sequences, caches, reads }) => {
      decodeFed += sequences.length;
      for (const b of sequences) {
        recorders[b]!.step(caches[b]!, caches[b]!.length(0) + 1, reads[b]!.entries);
      }
    },
  });
  const sequences = prompts.map((_, b) => ({
    ...recorders[b]!.finish(result.caches[b]!, result.stats.reads[b]!.entries),
    tokens: result.tokens[b]!,
    finishReason: result.finishReasons[b]!,
  }));
  // device caches hold GPU buffers: free them now rather than when collected
  for (const cache of result.caches) releaseCache(cache);
  return {
    sequences,
    generatedTokens: result.stats.generatedTokens,
    processedTokens: result.stats.promptTokens + decodeFed,
    elapsedMs: result.stats.prefillMs + result.stats.decodeMs,
  };
}
