import { LetheError } from '@lethe/core';
import { requireInteger, requireNonEmpty } from './validate';

/** Sample counts of one problem: `n` samples drawn, `c` of them correct. */
export interface PassAtKCounts {
  readonly n: number;
  readonly c: number;
}

/**
 * The unbiased pass@k estimator of Chen et al. (2021) for one problem with `n` samples of which
 * `c` are correct: the probability that a uniformly drawn k-subset of the samples contains at
 * least one correct sample,
 *
 * ```text
 * pass@k = 1 − C(n − c, k) / C(n, k)
 *        = 1 − ∏_{i = n−c+1}^{n} (1 − k / i)      (when n − c ≥ k; 1 otherwise)
 * ```
 *
 * The product form never forms a binomial coefficient, so it neither overflows nor loses
 * precision for large `n`.
 *
 * @param n - samples drawn, an integer ≥ 1.
 * @param c - correct samples, an integer in [0, n].
 * @param k - subset size, an integer in [1, n].
 * @throws LetheError `E_ARG` naming the argument for NaN, non-integers, negative counts,
 *   `c > n` or `k > n`.
 */
export function passAtK(n: number, c: number, k: number): number {
  validateCounts(n, c, k, '');
  return unbiasedPassAtK(n, c, k);
}

/**
 * The benchmark pass@k: the mean of {@link passAtK} over problems.
 *
 * @param problems - sample counts per problem; every problem needs `n ≥ k`.
 * @param k - subset size.
 * @throws LetheError `E_ARG` for an empty list or invalid counts (the argument is named
 *   `problems[i].n`, `problems[i].c` or `k`).
 */
export function meanPassAtK(problems: readonly PassAtKCounts[], k: number): number {
  requireNonEmpty(problems, 'problems');
  let sum = 0;
  problems.forEach(({ n, c }, i) => {
    validateCounts(n, c, k, `problems[${i}].`);
    sum += unbiasedPassAtK(n, c, k);
  });
  return sum / problems.length;
}

function validateCounts(n: number, c: number, k: number, prefix: string): void {
  requireInteger(n, 1, `${prefix}n`);
  requireInteger(c, 0, `${prefix}c`);
  requireInteger(k, 1, 'k');
  if (c > n) throw new LetheError('E_ARG', `must be ≤ n (${n}), got ${c}`, `${prefix}c`);
  if (k > n) throw new LetheError('E_ARG', `must be ≤ n (${n}), got ${k}`, 'k');
}

function unbiasedPassAtK(n: number, c: number, k: number): number {
  if (n - c < k) return 1;
  let allWrong = 1;
  for (let i = n - c + 1; i <= n; i++) allWrong *= 1 - k / i;
  return 1 - allWrong;
}
