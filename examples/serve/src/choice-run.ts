import type { PolicySet } from '@lethe/kv-cache';
import {
  DecodeStream,
  type PromptTokenEvent,
  type SamplingOptions,
  type SequenceCacheReport,
  StopMatcher,
} from '@lethe/model';
import type { FinishReason } from './openai-shapes';
import type { ServedModel } from './served-model';
import { LogprobEntries, type LogprobEntry } from './token-logprobs';

/** One sequence to generate: a choice of a request. */
export interface ChoiceRequest {
  readonly prompt: Int32Array;
  /** Tokens to generate at most; 0 (with `echo`) generates none. */
  readonly maxTokens: number;
  /** Temperature (0 = greedy), top-p, top-k, min-p, penalties, logit biases. */
  readonly sampling: SamplingOptions;
  /** Seed of the sequence's own sampling stream. */
  readonly seed: number;
  /** Stop sequences (text). */
  readonly stop: readonly string[];
  /** The sequence's own policies. */
  readonly policies: PolicySet;
  /** Aborted when the client goes away: the sequence leaves the batch at the next step. */
  readonly signal: AbortSignal;
  /** With log-probabilities: how many most likely alternatives each position lists. */
  readonly logprobs?: number;
  /**
   * The prompt's text, to send before the generated text (a completion's `echo`); with
   * `logprobs`, the prompt's tokens are scored too, under the request's policy.
   */
  readonly echo?: string;
}

/** What one sequence's cache did, as the response reports it (snake case, as the API's fields). */
export interface CacheReport {
  /** Live entries per layer at the end (summed over KV heads). */
  readonly live: readonly number[];
  /** Most entries each layer held at once. */
  readonly peak: readonly number[];
  /** Entries the eviction rounds removed. */
  readonly evictions: number;
  /** Peak entries over the full cache's for the same tokens: the budget the policy realised. */
  readonly realised_budget: number;
  /** Entries read over live entries, over the decode steps: the realised read fraction. */
  readonly read_fraction: number;
  /** A compute policy's realised per-axis averages, when one ran. */
  readonly compute?: {
    readonly token_keep: number;
    readonly mlp_input_keep: number;
    readonly precision: number;
  };
}

/** A finished sequence. */
export interface ChoiceOutcome {
  /** Its text: the echoed prompt, if any, then the generated text. */
  readonly text: string;
  readonly finishReason: FinishReason;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cache: CacheReport;
  /** The logprobs entries of its text, when asked for (the echoed prompt's first). */
  readonly logprobs?: readonly LogprobEntry[];
}

/**
 * Called with each piece of text as soon as it is final (stop sequences held back), and the
 * logprobs entries of the tokens whose text it completes (empty when none were asked for).
 */
export type TextSink = (text: string, logprobs: readonly LogprobEntry[]) => void;

/**
 * Runs one choice in the model's continuous batch: tokens become text incrementally
 * (`DecodeStream`, special tokens skipped), the text is scanned for the stop sequences ({@link StopMatcher}) —
 * a match ends the sequence at the next step, finish reason `stop`, the same as an end-of-text
 * token — and every final piece goes to `sink`, with the logprobs entries of its tokens (a
 * token's entry waits while its text is held back, and the tokens of a stop sequence have none,
 * as their text is not returned). With `echo`, the prompt's text goes first, with its tokens'
 * entries. Rejects with the signal's reason when the client aborts.
 */
export async function runChoice(
  served: ServedModel,
  request: ChoiceRequest,
  sink: TextSink,
): Promise<ChoiceOutcome> {
  const text = new DecodeStream(served.tokenizer, { skipSpecialTokens: true });
  const stopper = new StopMatcher(request.stop);
  const entries =
    request.logprobs === undefined
      ? undefined
      : new LogprobEntries(served.tokenizer, request.logprobs);
  let written = '';
  let stopped = false;
  let pending: LogprobEntry[] = [];
  const delivered: LogprobEntry[] = [];
  // A piece goes out with the entries of the tokens it completes; entries whose text is held
  // back wait for it — unless `flush` (the sequence ended: an end token writes no text).
  const deliver = (piece: string, flush = false) => {
    if (piece === '' && (pending.length === 0 || !flush)) return;
    written += piece;
    delivered.push(...pending);
    sink(piece, pending);
    pending = [];
  };
  const echo = request.echo;
  let echoed = echo === undefined;
  const promptScores = echo !== undefined && entries !== undefined;
  if (promptScores) pending.push(entries.first(request.prompt[0]!));
  const promptText = new DecodeStream(served.tokenizer, { skipSpecialTokens: true });
  let promptOffset = promptScores ? promptText.step(request.prompt[0]!).length : 0;
  const sendEcho = () => {
    if (echoed) return;
    echoed = true;
    deliver(echo!, true);
  };
  let offset = echo?.length ?? 0;
  let last = performance.now();
  const result = await served.batcher.submit(
    {
      prompt: request.prompt,
      // the batcher generates at least one token; with max_tokens 0 it is dropped unseen
      maxNewTokens: Math.max(1, request.maxTokens),
      sampling: request.sampling,
      seed: request.seed,
      stop: { eosTokenIds: served.stopTokens },
      policies: request.policies,
      signal: request.signal,
    },
    {
      onToken: ({ token, index, logits }) => {
        sendEcho();
        if (request.maxTokens === 0) return false;
        const now = performance.now();
        served.onToken?.(now - last, index === 0);
        last = now;
        // A model may have more ids than its tokenizer (a vocabulary padded for speed, as
        // Qwen2's): such an id has no text, and writes none.
        const piece = token < served.tokenizer.vocabSize ? text.step(token) : '';
        if (entries !== undefined) pending.push(entries.entry(logits, token, offset));
        offset += piece.length;
        const scan = stopper.push(piece);
        deliver(scan.text);
        if (scan.stopped) {
          stopped = true;
          return false;
        }
        return true;
      },
      ...(promptScores
        ? {
            onPromptToken: ({ token, logits }: PromptTokenEvent) => {
              pending.push(entries.entry(logits, token, promptOffset));
              promptOffset += promptText.step(token).length;
            },
          }
        : {}),
    },
  );
  if (result.finishReason === 'cancelled') throw request.signal.reason ?? new Error('cancelled');
  sendEcho();
  if (!stopped) {
    const tail = stopper.push(text.flush());
    deliver(tail.text);
    if (tail.stopped) stopped = true;
    else deliver(stopper.flush(), true);
  }
  const finishReason: FinishReason =
    request.maxTokens === 0
      ? 'length'
      : stopped || result.finishReason === 'eos'
        ? 'stop'
        : 'length';
  return {
    text: written,
    finishReason,
    promptTokens: request.prompt.length,
    completionTokens: request.maxTokens === 0 ? 0 : result.tokens.length,
    cache: cacheReport(result.cache),
    ...(entries === undefined ? {} : { logprobs: delivered }),
  };
}

/** The batcher's account of a sequence's cache, as the response reports it. */
function cacheReport(cache: SequenceCacheReport): CacheReport {
  const { compute } = cache;
  return {
    live: Array.from(cache.livePerLayer),
    peak: Array.from(cache.peakPerLayer),
    evictions: cache.evictedEntries,
    realised_budget: cache.realisedBudget,
    read_fraction: cache.reads.live === 0 ? 1 : cache.reads.entries / cache.reads.live,
    ...(compute === undefined
      ? {}
      : {
          compute: {
            token_keep: compute.tokenKeep,
            mlp_input_keep: compute.mlpInputKeep,
            precision: compute.precision,
          },
        }),
  };
}
