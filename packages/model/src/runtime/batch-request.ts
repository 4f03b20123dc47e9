import { LetheError } from '@lethe/core';
import type { PolicySet } from '@lethe/kv-cache';
import { checkReadSelector } from '../decoder/step-checks';
import type { ModelConfig } from '../io/index';
import { checkObject, checkOptionalFunction } from '../option-checks';
import type { ComputeUsage } from './compute-usage';
import { checkContextFits } from './generate-checks';
import type { DecodeReads } from './generation-stats';
import { checkPolicies } from './policy-checks';
import { type Prompt, promptOf } from './prompts';
import { type SamplingOptions, validateSampling } from './sampling';
import { type FinishReason, type StopConditions, validateStop } from './stop-conditions';

/** One generation request to a {@link ContinuousBatcher}. */
export interface BatchRequest {
  /** Prompt token ids (an `Int32Array`, or a plain array of integers). */
  readonly prompt: Prompt;
  /**
   * Most tokens to generate. Prompt plus output must fit the model's context:
   * `prompt length + maxNewTokens − 1 ≤ max_position_embeddings`.
   */
  readonly maxNewTokens: number;
  /** Temperature (0: greedy), top-p, top-k (default: temperature 1, no filtering). */
  readonly sampling?: SamplingOptions;
  /**
   * Seed of the request's random streams (default 0): its sampling draws from
   * `new Rng(seed).fork('sample-0')` and its policies from the `evict-0` / `compute-0` forks —
   * the streams `generate()` gives a single prompt with this `seed`, so the request reproduces
   * `generate({ prompts: [prompt], seed, … })` whatever else the batch runs.
   */
  readonly seed?: number;
  /** EOS token ids and stop sequences (kept in the output). */
  readonly stop?: StopConditions;
  /**
   * The request's own policies, built for a batch of one sequence (`policyContextOf(model, 1)`):
   * eviction policy (with a GSA `gate`, if any), compute policy (with `refreshEvery`, if any),
   * read selector. Default: the full cache. A `prompt` conditioning is the caller's to apply
   * (`policies.prompt.text(text)` before tokenizing): the batcher takes token ids and does not
   * read it.
   */
  readonly policies?: PolicySet;
  /**
   * Cancels the request: while it waits, it leaves the queue; while it runs, it leaves the batch
   * at once. Either way its promise resolves with finish reason `cancelled` and the tokens so
   * far, and its cache is freed.
   */
  readonly signal?: AbortSignal;
}

/** A generated token, as {@link BatchHandlers.onToken} sees it. */
export interface BatchTokenEvent {
  /** The token id. */
  readonly token: number;
  /** 0-based index among the request's generated tokens. */
  readonly index: number;
  /** Its log-probability under the sampling distribution (0 for greedy). */
  readonly logProb: number;
  /**
   * The model's next-token logits it was drawn from, before biases, penalties, temperature and
   * filters (what `tokenLogProbs` reads). Valid during the call only: copy what you keep.
   */
  readonly logits: Float32Array;
}

/** A prompt token with the logits that predicted it, as {@link BatchHandlers.onPromptToken} sees it. */
export interface PromptTokenEvent {
  /** Its position in the prompt (from 1: the first token has nothing before it). */
  readonly index: number;
  /** The token id. */
  readonly token: number;
  /**
   * The next-token logits after the tokens before it, as the request's cache held them then (its
   * policy's evictions included). Valid during the call only: copy what you keep.
   */
  readonly logits: Float32Array;
}

/** Callbacks of one request. */
export interface BatchHandlers {
  /**
   * Called for every token as it is produced (streaming); return `false` to stop the request
   * there (finish reason `callback`: how a server applies stop strings). A handler that throws
   * fails the request with its error.
   */
  readonly onToken?: (event: BatchTokenEvent) => boolean | undefined;
  /**
   * Given, called for every prompt token but the first, in order, with the logits that predicted
   * it — how a server scores a prompt (OpenAI's `echo` with `logprobs`). Each prefill chunk then
   * also computes its logits at every position. A handler that throws fails the request.
   */
  readonly onPromptToken?: (event: PromptTokenEvent) => void;
}

/** Why a batched request finished: a generation's reasons, or `cancelled` (its signal aborted, or `close({ cancel: true })`). */
export type BatchFinishReason = FinishReason | 'cancelled';

/** One request's KV cache, when it finished. */
export interface SequenceCacheReport {
  /** Live entries per layer (summed over KV heads). */
  readonly livePerLayer: Int32Array;
  /** Most live entries each layer held at once (measured after every append). */
  readonly peakPerLayer: Int32Array;
  /** Most live entries the whole cache held at once. */
  readonly peakTotal: number;
  /** Eviction rounds per layer. */
  readonly evictionRounds: Int32Array;
  /** Entries the eviction rounds removed, summed over layers and KV heads. */
  readonly evictedEntries: number;
  /**
   * Entries a full cache would have held at its peak for the same tokens: the tokens fed (prompt
   * plus decoded) × layers × KV heads.
   */
  readonly fullCacheEntries: number;
  /** `peakTotal / fullCacheEntries`: the share of the full cache it held at most (0 before any token). */
  readonly realisedBudget: number;
  /** What its decode steps read of the cache (`entries / live`: the realised read fraction). */
  readonly reads: DecodeReads;
  /** Its compute policy's realised averages, when it ran under one. */
  readonly compute?: ComputeUsage;
  /** KV refreshes it ran (a compute policy's `refreshEvery`). */
  readonly refreshes: number;
}

/** What a request's promise resolves to. */
export interface BatchResult {
  /** Generated tokens (the prompt not included). */
  readonly tokens: Int32Array;
  /** Log-probability of each generated token. */
  readonly logProbs: Float32Array;
  /** Why it finished. */
  readonly finishReason: BatchFinishReason;
  /** Prompt tokens. */
  readonly promptTokens: number;
  /** Its cache at the end (all 0 for a request cancelled while it waited). */
  readonly cache: SequenceCacheReport;
}

/** A request with its fields checked and defaults filled in. */
export interface CheckedRequest {
  readonly prompt: Int32Array;
  readonly maxNewTokens: number;
  readonly sampling: SamplingOptions;
  readonly seed: number;
  readonly stop: StopConditions;
  readonly policies: PolicySet;
  readonly signal: AbortSignal | undefined;
  readonly onToken: BatchHandlers['onToken'];
  readonly onPromptToken: BatchHandlers['onPromptToken'];
}

/**
 * Checks a request and its handlers against the model before it is queued.
 *
 * @throws LetheError `E_ARG` naming `request` or `handlers` when not an object; `prompt` (see
 *   `promptOf`); `maxNewTokens` when it is not a positive integer or prompt plus output would run
 *   past the model's context; `sampling.*`; `seed` unless a non-negative safe integer; `stop.*`;
 *   `policies` when not an object, `policies.eviction`, `policies.compute`,
 *   `policies.compute.refreshEvery`, `policies.readSelector` (or their fields, see
 *   `checkPolicies` and `checkReadSelector`); `signal` when not an `AbortSignal`;
 *   `handlers.onToken` / `handlers.onPromptToken` when not functions.
 */
export function checkBatchRequest(
  request: BatchRequest,
  handlers: BatchHandlers,
  config: ModelConfig,
): CheckedRequest {
  checkObject(request, 'request');
  checkObject(handlers, 'handlers');
  checkOptionalFunction(handlers.onToken, 'handlers.onToken');
  checkOptionalFunction(handlers.onPromptToken, 'handlers.onPromptToken');
  const prompt = promptOf(request.prompt, config, 'prompt');
  const { maxNewTokens, sampling = {}, seed = 0, stop = {}, policies = {}, signal } = request;
  if (!(Number.isInteger(maxNewTokens) && maxNewTokens >= 1)) {
    throw new LetheError(
      'E_ARG',
      `must be a positive integer, got ${maxNewTokens}`,
      'maxNewTokens',
    );
  }
  checkContextFits([prompt], maxNewTokens, config);
  validateSampling(sampling, config.vocab_size);
  if (!(Number.isSafeInteger(seed) && seed >= 0)) {
    throw new LetheError('E_ARG', `must be a non-negative safe integer, got ${seed}`, 'seed');
  }
  validateStop(stop, config.vocab_size);
  checkObject(policies, 'policies', 'a PolicySet');
  checkPolicies(policies, 'policies.');
  if (policies.readSelector !== undefined) {
    checkReadSelector(policies.readSelector, 'policies.readSelector');
  }
  const given = signal as unknown;
  if (
    given !== undefined &&
    !(
      typeof (given as AbortSignal | null)?.addEventListener === 'function' &&
      typeof (given as AbortSignal).aborted === 'boolean'
    )
  ) {
    throw new LetheError('E_ARG', 'must be an AbortSignal', 'signal');
  }
  return {
    prompt,
    maxNewTokens,
    sampling,
    seed,
    stop,
    policies,
    signal,
    onToken: handlers.onToken,
    onPromptToken: handlers.onPromptToken,
  };
}
