import { LetheError } from '@lethe/core';

/**
 * `Ĥ = H(softmax(logits)) / log V`: the entropy of the next-token distribution the logits define
 * (temperature 1), normalised by its maximum over a vocabulary of `V = logits.length` tokens, in
 * [0, 1] (0 for a single token). A `−Infinity` logit is a token of probability 0. Computed in
 * float64, shifted by the largest logit.
 *
 * @param argument the name of `logits` in error messages (default `logits`).
 * @throws LetheError `E_ARG` naming `argument` unless `logits` is a non-empty `Float32Array`
 *   whose entries are finite or `−Infinity`, at least one finite.
 */
export function normalisedEntropy(logits: Float32Array, argument = 'logits'): number {
  if (!(logits instanceof Float32Array) || logits.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty Float32Array of logits', argument);
  }
  let max = Number.NEGATIVE_INFINITY;
  logits.forEach((logit, i) => {
    if (Number.isNaN(logit) || logit === Number.POSITIVE_INFINITY) {
      throw new LetheError('E_ARG', `must be finite or −Infinity, got ${logit} at ${i}`, argument);
    }
    if (logit > max) max = logit;
  });
  if (max === Number.NEGATIVE_INFINITY) {
    throw new LetheError('E_ARG', 'must have at least one finite logit', argument);
  }
  if (logits.length === 1) return 0;
  // H = −Σ p log p = log Z − Σ p·d, with d = logit − max, p = e^d / Z, Z = Σ e^d.
  let partition = 0;
  let weighted = 0;
  for (const logit of logits) {
    if (logit === Number.NEGATIVE_INFINITY) continue;
    const shifted = logit - max;
    const mass = Math.exp(shifted);
    partition += mass;
    weighted += mass * shifted;
  }
  const entropy = Math.log(partition) - weighted / partition;
  return Math.min(1, Math.max(0, entropy / Math.log(logits.length)));
}
