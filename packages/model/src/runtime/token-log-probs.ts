import { LetheError } from '@lethe/core';
import { topKIndices } from '@lethe/kv-cache';

/** A token and its log-probability. */
export interface TokenLogProb {
  readonly token: number;
  readonly logProb: number;
}

/** What {@link tokenLogProbs} reports of one position. */
export interface PositionLogProbs {
  /** `log softmax(logits)[token]`. */
  readonly logProb: number;
  /** The `top` most likely tokens, most likely first (lower id first among ties). */
  readonly top: readonly TokenLogProb[];
}

/**
 * The model's own log-probabilities at one position — `log softmax(logits)`, at temperature 1
 * and before any bias, penalty or filter of the sampler, as OpenAI's `logprobs` and vLLM's
 * default report them — for `token` and the `top` most likely tokens. Float64 on the host, with
 * the log-sum-exp taken around the largest logit (no overflow); a −Infinity logit gives
 * −Infinity.
 *
 * @throws LetheError `E_ARG` naming `token` unless an integer in `[0, logits.length)`, `top`
 *   unless a non-negative integer, `logits` when it holds a NaN or +Infinity or no finite logit.
 */
export function tokenLogProbs(logits: Float32Array, token: number, top = 0): PositionLogProbs {
  const n = logits.length;
  if (!(Number.isInteger(token) && token >= 0 && token < n)) {
    throw new LetheError('E_ARG', `must be an integer in [0, ${n}), got ${token}`, 'token');
  }
  if (!(Number.isInteger(top) && top >= 0)) {
    throw new LetheError('E_ARG', `must be a non-negative integer, got ${top}`, 'top');
  }
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const logit = logits[i]!;
    if (Number.isNaN(logit) || logit === Number.POSITIVE_INFINITY) {
      throw new LetheError('E_ARG', `${logit} logit at index ${i}`, 'logits');
    }
    if (logit > max) max = logit;
  }
  if (max === Number.NEGATIVE_INFINITY) {
    throw new LetheError('E_ARG', 'has no finite logit', 'logits');
  }
  let sum = 0;
  for (let i = 0; i < n; i++) sum += Math.exp(logits[i]! - max);
  const logZ = max + Math.log(sum);
  return {
    logProb: logits[token]! - logZ,
    top: topIds(logits, Math.min(top, n)).map((id) => ({ token: id, logProb: logits[id]! - logZ })),
  };
}

/** The ids of the `k` largest logits (`topKIndices`: ties to the lower id), largest first. */
function topIds(logits: Float32Array, k: number): number[] {
  return Array.from(topKIndices(logits, k)).sort((a, b) => logits[b]! - logits[a]! || a - b);
}
