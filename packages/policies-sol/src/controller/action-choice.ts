import { LetheError } from '@lethe/core';
import type { RandomSource } from '@lethe/kv-cache';

/** The paper's sampling temperature during training (§4). */
export const DEFAULT_SAMPLING_TEMPERATURE = 1.3;

/**
 * The greedy action (evaluation, §4): the index of the largest logit, ties to the lowest index.
 *
 * @throws LetheError `E_SHAPE` naming `logits` when empty; `E_ARG` naming it for a NaN.
 */
export function greedyAction(logits: Float32Array): number {
  checkLogits(logits);
  let best = 0;
  for (let a = 1; a < logits.length; a++) if (logits[a]! > logits[best]!) best = a;
  return best;
}

/**
 * An action drawn from `softmax(logits / temperature)` by inverting its CDF at one uniform of
 * `rng` (one draw of the generator per call; `@lethe/core`'s `Rng` or a runtime's seeded
 * source): the same generator state always gives the same action. Actions with a `−∞` logit
 * are never drawn.
 *
 * @param temperature a finite number > 0; default {@link DEFAULT_SAMPLING_TEMPERATURE} (1.3).
 * @throws LetheError `E_SHAPE` naming `logits` when empty; `E_ARG` naming `logits` for a NaN or
 *   `+∞`, or when every logit is `−∞`, or `temperature` when it is not a finite positive number.
 */
export function sampleAction(
  logits: Float32Array,
  rng: RandomSource,
  temperature = DEFAULT_SAMPLING_TEMPERATURE,
): number {
  checkLogits(logits);
  if (!(Number.isFinite(temperature) && temperature > 0)) {
    throw new LetheError('E_ARG', `must be a finite number > 0, got ${temperature}`, 'temperature');
  }
  const max = logits[greedyAction(logits)]!;
  if (max === Number.POSITIVE_INFINITY) {
    throw new LetheError('E_ARG', 'must be finite or -Infinity, got Infinity', 'logits');
  }
  if (max === Number.NEGATIVE_INFINITY) {
    throw new LetheError('E_ARG', 'every logit is -Infinity', 'logits');
  }
  const weight = (a: number) => Math.exp((logits[a]! - max) / temperature);
  let total = 0;
  for (let a = 0; a < logits.length; a++) total += weight(a);
  const target = rng.fillUniform(new Float32Array(1))[0]! * total;
  let cumulative = 0;
  let last = 0;
  for (let a = 0; a < logits.length; a++) {
    const w = weight(a);
    if (w === 0) continue;
    cumulative += w;
    last = a;
    if (target < cumulative) return a;
  }
  // Rounding left the target at the very top of the CDF: the last action with mass.
  return last;
}

function checkLogits(logits: Float32Array): void {
  if (logits === null || typeof logits !== 'object' || logits.length === 0) {
    throw new LetheError('E_SHAPE', 'must hold at least one logit', 'logits');
  }
  for (let a = 0; a < logits.length; a++) {
    if (Number.isNaN(logits[a])) throw new LetheError('E_ARG', `logit ${a} is NaN`, 'logits');
  }
}
