import { LetheError } from '@lethe/core';
import type { KVCacheStore } from '@lethe/kv-cache';
import { Rng } from '@lethe/tensor';
import { checkContextFits, checkGenerateOptions } from './generate-checks';
import { collectStats, type DecodeReads, type GenerationStats } from './generation-stats';
import { type Prompt, promptIds } from './prompts';
import {
  logProbOf,
  type SampledToken,
  type SamplingOptions,
  sampleToken,
  validateSampling,
} from './sampling';
import { GenerationSession, type SessionOptions } from './session';
import {
  type FinishReason,
  type StopConditions,
  stopReason,
  validateStop,
} from './stop-conditions';

/** One generated token, as passed to the streaming callback. */
export interface TokenEvent {
  /** Index of the sequence in the batch. */
  readonly sequence: number;
  /** The token id. */
  readonly token: number;
  /** Its log-probability under the sampling distribution. */
  readonly logProb: number;
  /** 0-based index of this token among the sequence's generated tokens. */
  readonly index: number;
}

/** Options of {@link generate}. */
export interface GenerateOptions extends SessionOptions {
  /** Prompts, one per sequence: token ids as `Int32Array`s or plain arrays of integers. */
  readonly prompts: readonly Prompt[];
  /**
   * Upper bound on generated tokens per sequence. Prompt plus generated tokens must fit the
   * model's context: `prompt length + maxNewTokens − 1 ≤ max_position_embeddings` (the last
   * token is never fed back), checked before anything runs.
   */
  readonly maxNewTokens: number;
  /** Temperature / top-k / top-p (default: temperature 1, no filtering). */
  readonly sampling?: SamplingOptions;
  /** Seed of the sampling streams (default: `seed`). */
  readonly samplingSeed?: number;
  /** EOS ids and stop sequences. */
  readonly stop?: StopConditions;
  /** Called for every token as it is generated; return `false` to stop that sequence. */
  readonly onToken?: (event: TokenEvent) => boolean | undefined;
  /**
   * Called before every decode step with the sequences about to step and all caches (as the
   * step will find them), e.g. to record what each cache holds per step.
   */
  readonly onStep?: (event: StepEvent) => void;
  /**
   * Constrained decoding: called before each generated token of each sequence is chosen; when it
   * returns a token id, that token is emitted instead of a sampled one (NGC's meta-token, App.
   * A.4). A forced token draws nothing from the sequence's sampling stream, so forcing shifts the
   * draws of the tokens after it. Its recorded log-probability is the one the sampling
   * distribution gives it at that position ({@link logProbOf}: `softmax(logits / temperature)`
   * within top-k / top-p), as if it had been sampled, so a trainer's replay recomputes it; a
   * forced token outside the top-k / top-p set (or, greedy, other than the argmax) is emitted
   * with log-probability −Infinity. It is otherwise an ordinary token: `onToken`, stop
   * conditions and `maxNewTokens` see it.
   */
  readonly forceToken?: (event: ForceTokenEvent) => number | undefined;
  /** Checked before prefill and between decode steps; an abort rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
  /** Clock for the timing statistics, ms (default `performance.now`). */
  readonly now?: () => number;
}

/** What {@link GenerateOptions.onStep} sees before a decode step. */
export interface StepEvent {
  /** Indices of the sequences about to step. */
  readonly sequences: readonly number[];
  /** Every sequence's cache. */
  readonly caches: readonly KVCacheStore[];
  /**
   * What every sequence's decode steps have read of its cache so far (as
   * `GenerationSession.decodeReads`): the growth of `entries` from one step's event to the next
   * (or to `stats.reads` at the end) is what that step read — fewer than the live entries under
   * a read selector or a `tokenKeep` κ < 1.
   */
  readonly reads: readonly DecodeReads[];
}

/** What {@link GenerateOptions.forceToken} sees before a token is chosen. */
export interface ForceTokenEvent {
  /** Index of the sequence in the batch. */
  readonly sequence: number;
  /** 0-based index of the token about to be chosen among the sequence's generated tokens. */
  readonly index: number;
  /**
   * Every sequence's cache, as the token will find them: the sequence's cache holds its prompt
   * and its `index` earlier generated tokens (`length(layer)` = prompt length + `index`), after
   * any eviction round they triggered. The chosen token is appended by the next decode step.
   */
  readonly caches: readonly KVCacheStore[];
}

/** Output of {@link generate}. */
export interface GenerationResult {
  /** Generated tokens per sequence (the prompt is not included). */
  readonly tokens: Int32Array[];
  /** Log-probability of each generated token. */
  readonly logProbs: Float32Array[];
  /** Why each sequence stopped. */
  readonly finishReasons: FinishReason[];
  /** Throughput, timings and KV-cache accounting. */
  readonly stats: GenerationStats;
  /**
   * Each sequence's cache after the last step (what the eviction policy kept): a `KVCache`, or on
   * tfjs's WebGPU backend a `DeviceKVCache` (free its GPU buffers with `releaseCache` when done;
   * a dropped one is freed when collected), unless {@link SessionOptions.createCache} made
   * another `KVCacheStore`.
   */
  readonly caches: readonly KVCacheStore[];
}

/**
 * Runs prefill + decode for a batch of prompts under an optional eviction policy, compute
 * policy and read selector (`readSelector`, e.g. Quest), sampling with a seed (or forcing chosen
 * tokens, `forceToken`), and returns the tokens with throughput and KV statistics. Each
 * sequence's cache is the session's default (`KVCache`; `DeviceKVCache` on WebGPU) unless
 * `createCache` (passed to the session) makes another `KVCacheStore`.
 *
 * Every option is checked before anything runs; a decode step that fails leaks no tensor and
 * changes no cache.
 *
 * @throws LetheError `E_ARG` naming `options` when it is not an object; `maxNewTokens` when it is
 *   not a positive integer or the longest prompt plus `maxNewTokens` would run past the model's
 *   context (see {@link GenerateOptions.maxNewTokens}); `prompts` / `prompts[i]` for a bad batch
 *   or prompt; the bad sampling or stop option; a callback or `signal` of the wrong kind; the
 *   session's options (see {@link GenerationSession}); `forceToken` when it returns something
 *   other than an integer in [0, vocab_size).
 *
 * @example
 * ```ts
 * const result = await generate({
 *   model, prompts: [tokenizer.encode('Once upon')], maxNewTokens: 64,
 *   eviction: new StreamingLLM({ budget: { keepCount: 32 } }), sampling: { temperature: 0.8 }, seed: 1,
 * });
 * console.log(tokenizer.decode(result.tokens[0]), result.stats.tokensPerSecond);
 * ```
 */
export async function generate(options: GenerateOptions): Promise<GenerationResult> {
  checkGenerateOptions(options);
  const { maxNewTokens, sampling = {}, stop = {}, onToken, onStep, forceToken, signal } = options;
  const now = options.now ?? (() => performance.now());
  const session = new GenerationSession(options);
  const config = options.model.config;
  const vocab = config.vocab_size;
  validateStop(stop, vocab);
  validateSampling(sampling, vocab);
  const prompts = promptIds(options.prompts, config);
  checkContextFits(prompts, maxNewTokens, config);
  const ids = options.streamIds ?? prompts.map((_, b) => b);
  const root = new Rng(options.samplingSeed ?? options.seed ?? 0);
  const samplers = ids.map((id) => root.fork(`sample-${id}`));
  const tokens: number[][] = prompts.map(() => []);
  const logProbs: number[][] = prompts.map(() => []);
  const finish: (FinishReason | undefined)[] = prompts.map(() => undefined);

  signal?.throwIfAborted();
  const t0 = now();
  let out = await session.prefill(prompts);
  const t1 = now();
  let active = prompts.map((_, b) => b);
  let fed = 0;
  while (active.length > 0) {
    const next = new Int32Array(active.length);
    active.forEach((b, i) => {
      const forced = forceToken?.({
        sequence: b,
        index: tokens[b]!.length,
        caches: session.caches,
      });
      const drawn: SampledToken =
        forced === undefined
          ? sampleToken(out.logits[i]!, sampling, samplers[b]!, tokens[b]!)
          : {
              token: forced,
              logProb: logProbOf(out.logits[i]!, checkForced(forced, vocab), sampling, tokens[b]!),
            };
      next[i] = drawn.token;
      tokens[b]!.push(drawn.token);
      logProbs[b]!.push(drawn.logProb);
      const index = tokens[b]!.length - 1;
      if (onToken?.({ sequence: b, token: drawn.token, logProb: drawn.logProb, index }) === false) {
        finish[b] = 'callback';
      } else {
        finish[b] =
          stopReason(tokens[b]!, stop) ?? (index + 1 >= maxNewTokens ? 'length' : undefined);
      }
    });
    const still = active.filter((b) => finish[b] === undefined);
    if (still.length === 0) break;
    signal?.throwIfAborted();
    onStep?.({ sequences: still, caches: session.caches, reads: session.decodeReads });
    const feed = Int32Array.from(still, (b) => next[active.indexOf(b)]!);
    out = await session.step(still, feed);
    fed += still.length;
    active = still;
  }
  const t2 = now();
  const generated = tokens.reduce((s, t) => s + t.length, 0);
  return {
    tokens: tokens.map((t) => Int32Array.from(t)),
    logProbs: logProbs.map((l) => Float32Array.from(l)),
    finishReasons: finish.map((f) => f ?? 'length'),
    caches: session.caches,
    stats: collectStats(
      session.caches,
      {
        promptTokens: prompts.reduce((s, p) => s + p.length, 0),
        generatedTokens: generated,
        decodedTokens: fed,
        prefillMs: t1 - t0,
        decodeMs: t2 - t1,
      },
      session.decodeReads,
      session.computeUsage,
      session.refreshes,
    ),
  };
}

/** `id` when it is a token id of the vocabulary; else `E_ARG` naming `forceToken`. */
function checkForced(id: number, vocab: number): number {
  if (!(Number.isInteger(id) && id >= 0 && id < vocab)) {
    throw new LetheError(
      'E_ARG',
      `must return undefined or an integer in [0, ${vocab}), got ${id}`,
      'forceToken',
    );
  }
  return id;
}
