import { type Tokenizer, tokenLogProbs } from '@lethe/model';

/** The log-probability the API reports for a token the model gave no probability (its convention). */
const NO_PROBABILITY = -9999;

/** A token as a logprobs entry names it: its text alone, and that text's UTF-8 bytes. */
interface TokenText {
  readonly token: string;
  readonly bytes: number[];
}

/** One position of a choice's `logprobs`: a generated token, or with `echo` a prompt token. */
export interface LogprobEntry extends TokenText {
  /** Its log-probability under the model (null for the prompt's first token: nothing predicts it). */
  readonly logprob: number | null;
  /** The most likely tokens there, most likely first (null for the prompt's first token). */
  readonly top: readonly (TokenText & { readonly logprob: number })[] | null;
  /** Where its text starts in the choice's text (the echoed prompt's included). */
  readonly offset: number;
}

/**
 * Makes the logprobs entries of one choice: the model's own log-probabilities (`tokenLogProbs`
 * of `@lethe/model`: log softmax of the logits at temperature 1, before the sampler's biases,
 * penalties and filters, as OpenAI reports them) of each token and of the `top` most likely
 * ones, each named by its text decoded alone (special tokens written out).
 */
export class LogprobEntries {
  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly top: number,
  ) {}

  /** The entry of `token` predicted by `logits`, its text starting at `offset`. */
  entry(logits: Float32Array, token: number, offset: number): LogprobEntry {
    const scored = tokenLogProbs(logits, token, this.top);
    return {
      ...this.text(token),
      logprob: finite(scored.logProb),
      top: scored.top.map((alternative) => ({
        ...this.text(alternative.token),
        logprob: finite(alternative.logProb),
      })),
      offset,
    };
  }

  /** The entry of a prompt's first token: nothing predicts it. */
  first(token: number): LogprobEntry {
    return { ...this.text(token), logprob: null, top: null, offset: 0 };
  }

  private text(token: number): TokenText {
    // an id past the tokenizer (a vocabulary padded for speed) has no text
    const text = token < this.tokenizer.vocabSize ? this.tokenizer.decode([token]) : '';
    return { token: text, bytes: Array.from(Buffer.from(text, 'utf8')) };
  }
}

/** −Infinity (a masked logit) as the API's stand-in; JSON cannot hold it. */
function finite(logProb: number): number {
  return logProb === Number.NEGATIVE_INFINITY ? NO_PROBABILITY : logProb;
}

/** A completion choice's `logprobs` (the legacy shape: parallel lists). */
export function completionLogprobs(entries: readonly LogprobEntry[]) {
  return {
    tokens: entries.map((entry) => entry.token),
    token_logprobs: entries.map((entry) => entry.logprob),
    top_logprobs: entries.map((entry) =>
      entry.top === null
        ? null
        : Object.fromEntries(
            entry.top.map((alternative) => [alternative.token, alternative.logprob]),
          ),
    ),
    text_offset: entries.map((entry) => entry.offset),
  };
}

/** A chat choice's `logprobs`. */
export function chatLogprobs(entries: readonly LogprobEntry[]) {
  return {
    content: entries.map((entry) => ({
      token: entry.token,
      logprob: entry.logprob,
      bytes: entry.bytes,
      top_logprobs: (entry.top ?? []).map((alternative) => ({
        token: alternative.token,
        logprob: alternative.logprob,
        bytes: alternative.bytes,
      })),
    })),
    refusal: null,
  };
}
