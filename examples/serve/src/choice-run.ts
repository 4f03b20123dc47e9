import type { PolicySet } from '@lethe/kv-cache';
import { DecodeStream, type SequenceCacheReport } from '@lethe/model';
import type { FinishReason } from './openai-shapes';
import type { ServedModel } from './served-model';
import { StopMatcher } from './stop-matcher';

/** One sequence to generate: a choice of a request. */
export interface ChoiceRequest {
  readonly prompt: Int32Array;
  readonly maxTokens: number;
  /** 0 = greedy. */
  readonly temperature: number;
  readonly topP: number;
  /** Seed of the sequence's own sampling stream. */
  readonly seed: number;
  /** Stop sequences (text). */
  readonly stop: readonly string[];
  /** The sequence's own policies. */
  readonly policies: PolicySet;
  /** Aborted when the client goes away: the sequence leaves the batch at the next step. */
  readonly signal: AbortSignal;
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
  readonly text: string;
  readonly finishReason: FinishReason;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cache: CacheReport;
}

/** Called with each piece of text as soon as it is final (stop sequences held back). */
export type TextSink = (text: string) => void;

/**
 * Runs one choice in the model's continuous batch: tokens become text incrementally
 * (`DecodeStream`, special tokens skipped), the text is scanned for the stop sequences ({@link StopMatcher}) —
 * a match ends the sequence at the next step, finish reason `stop`, the same as an end-of-text
 * token — and every final piece goes to `sink`. Rejects with the signal's reason when the client
 * aborts.
 */
export async function runChoice(
  served: ServedModel,
  request: ChoiceRequest,
  sink: TextSink,
): Promise<ChoiceOutcome> {
  const text = new DecodeStream(served.tokenizer, { skipSpecialTokens: true });
  const stopper = new StopMatcher(request.stop);
  let written = '';
  let stopped = false;
  const write = (piece: string) => {
    if (piece === '') return;
    written += piece;
    sink(piece);
  };
  let last = performance.now();
  const result = await served.batcher.submit(
    {
      prompt: request.prompt,
      maxNewTokens: request.maxTokens,
      sampling: { temperature: request.temperature, topP: request.topP },
      seed: request.seed,
      stop: { eosTokenIds: served.stopTokens },
      policies: request.policies,
      signal: request.signal,
    },
    {
      onToken: ({ token, index }) => {
        const now = performance.now();
        served.onToken?.(now - last, index === 0);
        last = now;
        // A model may have more ids than its tokenizer (a vocabulary padded for speed, as
        // Qwen2's): such an id has no text, and writes none.
        const piece = token < served.tokenizer.vocabSize ? text.step(token) : '';
        const scan = stopper.push(piece);
        write(scan.text);
        if (scan.stopped) {
          stopped = true;
          return false;
        }
        return true;
      },
    },
  );
  if (result.finishReason === 'cancelled') throw request.signal.reason ?? new Error('cancelled');
  if (!stopped) {
    const tail = stopper.push(text.flush());
    write(tail.text);
    if (tail.stopped) stopped = true;
    else write(stopper.flush());
  }
  const finishReason: FinishReason = stopped || result.finishReason === 'eos' ? 'stop' : 'length';
  return {
    text: written,
    finishReason,
    promptTokens: request.prompt.length,
    completionTokens: result.tokens.length,
    cache: cacheReport(result.cache),
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
