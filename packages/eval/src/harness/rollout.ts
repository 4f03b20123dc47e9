import type { EvictionPolicy } from '@lethe/kv-cache';
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
import { LetheError, Rng } from '@lethe/tensor';
import type { Clock } from './clock';
import { ReadRecorder, type ReadTrace } from './read-trace';

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
  /** Eviction policy (`undefined`: full cache). */
  readonly eviction: EvictionPolicy | undefined;
  readonly clock: Clock;
  /** Checked between decode steps; an abort rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
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
  /** Clock time of the decode loop (prefill excluded), ms. */
  readonly decodeMs: number;
}

/**
 * Generates a batch exactly as `generate()` of `@lethe/model` does with the same `prompts`,
 * `seed` (as both `seed` and `samplingSeed`), `streamIds`, `sampling`, `stop`, `maxNewTokens` and
 * `eviction` — same sampling streams (`new Rng(seed).fork('sample-<id>')`), same stop rules,
 * same session — while also recording, per sequence, what its cache read at every predicted
 * token ({@link ReadTrace}), which `generate()`'s end-of-run statistics cannot give.
 *
 * @throws LetheError `E_ARG` / `E_SHAPE` for bad options (as `generate()`); rejects with
 *   `signal.reason` when `signal` aborts.
 */
export async function rollout(options: RolloutOptions): Promise<RolloutBatch> {
  const { model, prompts, streamIds, maxNewTokens, sampling, stop, clock, signal } = options;
  if (!(Number.isInteger(maxNewTokens) && maxNewTokens >= 1)) {
    throw new LetheError(
      'E_ARG',
      `must be a positive integer, got ${maxNewTokens}`,
      'maxNewTokens',
    );
  }
  if (streamIds.length !== prompts.length) {
    throw new LetheError(
      'E_SHAPE',
      `needs one id per prompt (${prompts.length}), got ${streamIds.length}`,
      'streamIds',
    );
  }
  validateSampling(sampling);
  validateStop(stop, model.config.vocab_size);
  signal?.throwIfAborted();
  const session = new GenerationSession({
    model,
    eviction: options.eviction,
    seed: options.seed,
    streamIds,
  });
  const root = new Rng(options.seed);
  const samplers = streamIds.map((id) => root.fork(`sample-${id}`));
  const perToken = model.config.num_hidden_layers * model.config.num_key_value_heads;
  const recorders = prompts.map(() => new ReadRecorder(perToken));
  const tokens: number[][] = prompts.map(() => []);
  const finish: (FinishReason | undefined)[] = prompts.map(() => undefined);

  let out = await session.prefill(prompts);
  prompts.forEach((prompt, b) => {
    recorders[b]!.prefill(prompt.length);
  });
  const start = clock();
  let active = prompts.map((_, b) => b);
  while (active.length > 0) {
    const next = new Int32Array(active.length);
    active.forEach((b, i) => {
      const drawn = sampleToken(out.logits[i]!, sampling, samplers[b]!);
      next[i] = drawn.token;
      tokens[b]!.push(drawn.token);
      finish[b] =
        stopReason(tokens[b]!, stop) ?? (tokens[b]!.length >= maxNewTokens ? 'length' : undefined);
    });
    const still = active.filter((b) => finish[b] === undefined);
    if (still.length === 0) break;
    signal?.throwIfAborted();
    const feed = Int32Array.from(still, (b) => next[active.indexOf(b)]!);
    for (const b of still) {
      recorders[b]!.step(session.caches[b]!, prompts[b]!.length + tokens[b]!.length);
    }
    out = await session.step(still, feed);
    active = still;
  }
  const decodeMs = clock() - start;
  return {
    sequences: prompts.map((_, b) => ({
      ...recorders[b]!.finish(session.caches[b]!),
      tokens: Int32Array.from(tokens[b]!),
      finishReason: finish[b] ?? 'length',
    })),
    generatedTokens: tokens.reduce((sum, t) => sum + t.length, 0),
    decodeMs,
  };
}
