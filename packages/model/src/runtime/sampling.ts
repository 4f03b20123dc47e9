import { LetheError } from '@lethe/core';
import type { Rng } from '@lethe/tensor';
import { descendingLogitOrder } from './logit-order';

/** How the next token is drawn from the logits. */
export interface SamplingOptions {
  /**
   * Softmax temperature; 0 means greedy (argmax). Default 1. Any positive temperature, however
   * small, is exact: the weights are `exp((logit − max) / temperature)`, which cannot overflow, so
   * as the temperature vanishes the distribution becomes its limit, the argmax (shared equally by
   * exactly tied maxima) — `1e-320` draws the argmax with log-probability 0, as greedy does.
   */
  readonly temperature?: number;
  /** Keep only the k most likely tokens (0 or undefined: all). */
  readonly topK?: number;
  /** Keep the smallest set of most likely tokens whose probability reaches p, in (0, 1]. Default 1. */
  readonly topP?: number;
  /**
   * Then keep only the tokens whose probability is at least `minP` times the most likely one's,
   * in [0, 1] (default 0: all), as Hugging Face's and vLLM's `min_p`.
   */
  readonly minP?: number;
  /**
   * Subtracted once from the logit of every token already generated (OpenAI's
   * `presence_penalty`; default 0). Penalties and biases apply before the temperature.
   */
  readonly presencePenalty?: number;
  /** Subtracted from a token's logit once per time it was generated (`frequency_penalty`; default 0). */
  readonly frequencyPenalty?: number;
  /** Added to the logits of the tokens it names, by id (`logit_bias`; −100 all but bans a token). */
  readonly logitBias?: ReadonlyMap<number, number>;
}

/** A drawn token and the log-probability the (temperature-scaled, filtered) distribution gave it. */
export interface SampledToken {
  readonly token: number;
  readonly logProb: number;
}

/**
 * Validates sampling options.
 *
 * @param vocabSize when given, the ids of `logitBias` must be below it.
 * @throws LetheError `E_ARG` naming `sampling` when it is not an object, or the bad field
 *   (`sampling.logitBias` when it is not a Map of integer ids to finite numbers).
 */
export function validateSampling(options: SamplingOptions, vocabSize?: number): void {
  if (typeof options !== 'object' || options === null) {
    throw new LetheError('E_ARG', `must be an object, got ${options}`, 'sampling');
  }
  const {
    temperature = 1,
    topK = 0,
    topP = 1,
    minP = 0,
    presencePenalty = 0,
    frequencyPenalty = 0,
    logitBias,
  } = options;
  if (!(Number.isFinite(temperature) && temperature >= 0)) {
    throw new LetheError(
      'E_ARG',
      `must be a finite number ≥ 0, got ${temperature}`,
      'sampling.temperature',
    );
  }
  if (!(Number.isInteger(topK) && topK >= 0)) {
    throw new LetheError('E_ARG', `must be a non-negative integer, got ${topK}`, 'sampling.topK');
  }
  if (!(topP > 0 && topP <= 1)) {
    throw new LetheError('E_ARG', `must be in (0, 1], got ${topP}`, 'sampling.topP');
  }
  if (!(minP >= 0 && minP <= 1)) {
    throw new LetheError('E_ARG', `must be in [0, 1], got ${minP}`, 'sampling.minP');
  }
  for (const [name, value] of [
    ['presencePenalty', presencePenalty],
    ['frequencyPenalty', frequencyPenalty],
  ] as const) {
    if (!Number.isFinite(value)) {
      throw new LetheError('E_ARG', `must be a finite number, got ${value}`, `sampling.${name}`);
    }
  }
  if (logitBias !== undefined) checkLogitBias(logitBias, vocabSize);
}

/** Throws `E_ARG` naming `sampling.logitBias` unless a Map of ids (below `vocabSize`) to finite numbers. */
function checkLogitBias(bias: ReadonlyMap<number, number>, vocabSize: number | undefined): void {
  if (!(bias instanceof Map)) {
    throw new LetheError('E_ARG', 'must be a Map of token ids to numbers', 'sampling.logitBias');
  }
  for (const [id, value] of bias) {
    const below = vocabSize === undefined ? '' : ` below ${vocabSize}`;
    if (!(Number.isInteger(id) && id >= 0 && (vocabSize === undefined || id < vocabSize))) {
      throw new LetheError(
        'E_ARG',
        `has key ${id}: not a token id (a non-negative integer${below})`,
        'sampling.logitBias',
      );
    }
    if (!Number.isFinite(value)) {
      throw new LetheError(
        'E_ARG',
        `gives token ${id} ${value}: not a finite number`,
        'sampling.logitBias',
      );
    }
  }
}

/**
 * Draws one token from `logits` (one row) with temperature, top-k, top-p and min-p filtering,
 * using one uniform from `rng`, after the logit biases and the presence and frequency penalties
 * of the tokens already `generated` (see {@link adjustedLogits}). Greedy (temperature 0) picks
 * the lowest index among ties of the adjusted logits and reports log-probability 0. Computed in
 * float64 on the host; the log-probability is never NaN.
 *
 * A logit of −Infinity is a token of probability 0 (a mask). NaN and +Infinity logits are
 * refused rather than given a meaning: they come from a forward pass that overflowed, and any
 * token drawn from them would be arbitrary.
 *
 * @throws LetheError `E_ARG` naming `logits` when it is empty, holds a NaN or +Infinity, or
 *   every logit is −Infinity (no token can be drawn).
 */
export function sampleToken(
  raw: ArrayLike<number>,
  options: SamplingOptions,
  rng: Rng,
  generated: ArrayLike<number> = [],
): SampledToken {
  const { temperature = 1 } = options;
  checkLogits(raw);
  const logits = adjustedLogits(raw, options, generated);
  if (temperature === 0) return { token: argmax(logits), logProb: 0 };
  const { order, weights, nucleus, total } = nucleusOf(logits, options);
  const u = rng.uniform(1)[0]! * total;
  let acc = 0;
  let pick = nucleus - 1;
  for (let r = 0; r < nucleus; r++) {
    acc += weights[r]!;
    if (u < acc) {
      pick = r;
      break;
    }
  }
  return { token: order[pick]!, logProb: Math.log(weights[pick]! / total) };
}

/**
 * The log-probability that {@link sampleToken}'s distribution (same `logits` row, options and
 * `generated` tokens) gives `token`, without drawing: `log softmax(adjusted / temperature)[token]`
 * renormalised over the top-k / top-p / min-p set, exactly the value `sampleToken` reports when
 * it draws that token. A token
 * outside the set has −Infinity; greedy (temperature 0) gives 0 to the argmax (lowest index among
 * ties) and −Infinity to every other token. Computed in float64 on the host.
 *
 * @throws LetheError `E_ARG` naming `token` when it is not an integer in [0, logits.length), or
 *   `logits` as {@link sampleToken} does.
 */
export function logProbOf(
  raw: ArrayLike<number>,
  token: number,
  options: SamplingOptions,
  generated: ArrayLike<number> = [],
): number {
  const { temperature = 1 } = options;
  if (!(Number.isInteger(token) && token >= 0 && token < raw.length)) {
    throw new LetheError(
      'E_ARG',
      `must be an integer in [0, ${raw.length}), got ${token}`,
      'token',
    );
  }
  checkLogits(raw);
  const logits = adjustedLogits(raw, options, generated);
  if (temperature === 0) return token === argmax(logits) ? 0 : Number.NEGATIVE_INFINITY;
  const { order, weights, nucleus, total } = nucleusOf(logits, options);
  const rank = order.indexOf(token);
  return rank >= 0 && rank < nucleus ? Math.log(weights[rank]! / total) : Number.NEGATIVE_INFINITY;
}

/**
 * The logits a token is drawn from after `options.logitBias` and the penalties of the tokens
 * already `generated` (OpenAI's definition): `logit[j] + bias[j] − count[j] · frequencyPenalty −
 * (count[j] > 0) · presencePenalty`, where `count[j]` is how often `j` was generated. `logits`
 * itself when nothing applies (no bias, no penalty or nothing generated yet), else a float64 copy.
 */
export function adjustedLogits(
  logits: ArrayLike<number>,
  options: SamplingOptions,
  generated: ArrayLike<number>,
): ArrayLike<number> {
  const { presencePenalty = 0, frequencyPenalty = 0, logitBias } = options;
  const penalised = generated.length > 0 && (presencePenalty !== 0 || frequencyPenalty !== 0);
  if (!penalised && (logitBias === undefined || logitBias.size === 0)) return logits;
  const out = Float64Array.from(logits);
  for (const [id, bias] of logitBias ?? []) if (id < out.length) out[id]! += bias;
  if (penalised) {
    const counts = new Map<number, number>();
    for (let i = 0; i < generated.length; i++) {
      const token = generated[i]!;
      counts.set(token, (counts.get(token) ?? 0) + 1);
    }
    for (const [token, count] of counts) {
      if (token < out.length) out[token]! -= count * frequencyPenalty + presencePenalty;
    }
  }
  return out;
}

/** Throws `E_ARG` naming `logits` unless some logit is finite and none is NaN or +Infinity. */
function checkLogits(logits: ArrayLike<number>): void {
  let drawable = false;
  for (let i = 0; i < logits.length; i++) {
    const logit = logits[i]!;
    if (Number.isNaN(logit) || logit === Number.POSITIVE_INFINITY) {
      throw new LetheError(
        'E_ARG',
        `${logit} logit at index ${i} (the forward pass overflowed)`,
        'logits',
      );
    }
    if (logit !== Number.NEGATIVE_INFINITY) drawable = true;
  }
  if (!drawable) {
    throw new LetheError(
      'E_ARG',
      logits.length === 0 ? 'must not be empty' : 'every logit is -Infinity: no token can be drawn',
      'logits',
    );
  }
}

/** Index of the largest logit, the lowest among ties. */
function argmax(logits: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
  return best;
}

/**
 * The tokens ordered by logit (stable: lower index first among ties), their unnormalised
 * temperature-scaled weights `exp((logit − max) / temperature)` within top-k — in (0, 1] for
 * the largest and finite for every temperature > 0 (the difference is taken before dividing, so
 * a vanishing temperature sends the others to 0 instead of overflowing) — how many of them the
 * top-p nucleus and then min-p keep (min-p keeps the weights ≥ `minP`, the largest being 1), and
 * the kept total weight (≥ 1). Logits are checked first.
 */
function nucleusOf(
  logits: ArrayLike<number>,
  options: SamplingOptions,
): { order: Uint32Array; weights: Float64Array; nucleus: number; total: number } {
  const { temperature = 1, topK = 0, topP = 1, minP = 0 } = options;
  const n = logits.length;
  const order = descendingLogitOrder(logits);
  const kept = topK > 0 ? Math.min(topK, n) : n;
  const max = logits[order[0]!]!;
  const weights = new Float64Array(kept);
  let total = 0;
  for (let r = 0; r < kept; r++) {
    weights[r] = Math.exp((logits[order[r]!]! - max) / temperature);
    total += weights[r]!;
  }
  let nucleus = kept;
  if (topP < 1) {
    let mass = 0;
    for (let r = 0; r < kept; r++) {
      mass += weights[r]! / total;
      if (mass >= topP) {
        nucleus = r + 1;
        break;
      }
    }
  }
  if (minP > 0) {
    let above = 1;
    while (above < nucleus && weights[above]! >= minP) above++;
    nucleus = above;
  }
  if (nucleus < kept) {
    total = 0;
    for (let r = 0; r < nucleus; r++) total += weights[r]!;
  }
  return { order, weights, nucleus, total };
}
