import { requireInteger, requireNonNegative } from './validate';

/**
 * Perplexity of `tokens` teacher-forced predictions whose negative log-likelihoods (natural
 * log) sum to `sumNll`:
 *
 * ```text
 * PPL = exp(sumNll / tokens)
 * ```
 *
 * @param sumNll - Σ −log p(yₜ | y₍<t₎), nats, finite and ≥ 0.
 * @param tokens - number of predicted tokens, an integer ≥ 1.
 * @throws LetheError `E_ARG` naming the argument for NaN, negative or non-integer values.
 */
export function perplexity(sumNll: number, tokens: number): number {
  requireNonNegative(sumNll, 'sumNll');
  requireInteger(tokens, 1, 'tokens');
  return Math.exp(sumNll / tokens);
}
