import { Rng } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import type { BatchFinishReason, BatchResult, CheckedRequest } from './batch-request';
import { sampleToken } from './sampling';
import { sequenceReport } from './sequence-report';
import type { SequenceState } from './sequence-state';
import { stopReason } from './stop-conditions';

/**
 * One request inside a {@link ContinuousBatcher}, from submission to its settled promise: how
 * much of its prompt is in its cache, the token its next decode step feeds, its output so far,
 * its sampling stream, and why it finished.
 */
export class BatchedSequence {
  /** Its state once admitted (cache, policies); undefined while it waits and once it is freed. */
  state: SequenceState | undefined;
  /** Prompt tokens in its cache so far. */
  fed = 0;
  /** The token its next decode step feeds, or undefined. */
  pending: number | undefined;
  /** Why it finished, once it has. */
  finish: BatchFinishReason | undefined;
  private readonly tokens: number[] = [];
  private readonly logProbs: number[] = [];
  private readonly sampler: Rng;
  private settled = false;

  /**
   * @param request the checked request.
   * @param config the model's config (for the cache report).
   * @param resolve settles its promise with a result.
   * @param reject settles its promise with an error.
   */
  constructor(
    readonly request: CheckedRequest,
    private readonly config: ModelConfig,
    private readonly resolve: (result: BatchResult) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.sampler = new Rng(request.seed).fork('sample-0');
  }

  /** Whether it has finished or failed: it takes no further part in any step. */
  get done(): boolean {
    return this.finish !== undefined || this.settled;
  }

  /** Whether part of its prompt is still to be prefilled (admitted, not done). */
  get prefilling(): boolean {
    return this.state !== undefined && !this.done && this.fed < this.request.prompt.length;
  }

  /** Tokens generated so far. */
  get generated(): number {
    return this.tokens.length;
  }

  /**
   * Draws its next token from `logits` (its own stream), streams it to `onToken`, then decides
   * whether it goes on (`pending` is the token to feed) or finishes: `callback` when `onToken`
   * returned `false`, else `eos` / `stop-sequence` by its stop conditions, else `length` at
   * `maxNewTokens`.
   *
   * @throws the sampler's `E_ARG` for non-finite logits, and what `onToken` throws.
   */
  take(logits: Float32Array): void {
    const { sampling, stop, maxNewTokens, onToken } = this.request;
    const drawn = sampleToken(logits, sampling, this.sampler, this.tokens);
    this.tokens.push(drawn.token);
    this.logProbs.push(drawn.logProb);
    const index = this.tokens.length - 1;
    this.pending = undefined;
    if (onToken?.({ token: drawn.token, index, logProb: drawn.logProb, logits }) === false) {
      this.finish ??= 'callback';
    } else {
      this.finish ??=
        stopReason(this.tokens, stop) ?? (index + 1 >= maxNewTokens ? 'length' : undefined);
    }
    if (this.finish === undefined) this.pending = drawn.token;
  }

  /**
   * Hands `onPromptToken` the prompt tokens the chunk that started at prompt position `start`
   * predicted: its row `t` (of `positionLogits`, `[chunk, vocab]`) predicts token `start + t + 1`,
   * up to the prompt's last token.
   *
   * @throws what `onPromptToken` throws.
   */
  scorePrompt(start: number, positionLogits: Float32Array, vocab: number): void {
    const { prompt, onPromptToken } = this.request;
    if (onPromptToken === undefined) return;
    const rows = positionLogits.length / vocab;
    for (let t = 0; t < rows && start + t + 1 < prompt.length; t++) {
      onPromptToken({
        index: start + t + 1,
        token: prompt[start + t + 1]!,
        logits: positionLogits.subarray(t * vocab, (t + 1) * vocab),
      });
    }
  }

  /**
   * Resolves its promise with `reason` (unless it has finished already), its tokens and its
   * cache report, and frees its cache. Settling twice does nothing.
   */
  settle(reason: BatchFinishReason): void {
    this.finish ??= reason;
    if (this.settled) return;
    this.settled = true;
    this.resolve({
      tokens: Int32Array.from(this.tokens),
      logProbs: Float32Array.from(this.logProbs),
      finishReason: this.finish,
      promptTokens: this.request.prompt.length,
      cache: sequenceReport(this.state, this.config),
    });
    this.state = undefined;
  }

  /** Rejects its promise with `error` and frees its cache (once settled, nothing). */
  fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.state = undefined;
    this.reject(error);
  }
}
