import { LetheError } from '@lethe/core';
import { SeededRandom } from '../tasks/seeded';
import { checkPaired } from './paired-values';
import { requireFinite } from './validate';

/** Options of {@link pairedBootstrap}. */
export interface PairedBootstrapOptions {
  /** Resamples drawn (default 10,000). */
  readonly resamples?: number;
  /** Seed of the resampling stream (default 0): the same inputs and seed give the same result. */
  readonly seed?: number;
  /** Coverage of the percentile interval, in (0, 1) (default 0.95). */
  readonly confidence?: number;
}

/** A paired bootstrap of the mean difference of two methods on the same examples. */
export interface PairedBootstrap {
  /** Examples compared. */
  readonly n: number;
  /** Mean of `a − b` over the examples. */
  readonly meanDifference: number;
  /**
   * Percentile interval of the resampled mean differences at `confidence`: the k-th smallest and
   * k-th largest of them, `k = ⌊R·(1 − confidence)/2⌋` (0-based), so swapping `a` and `b` negates it.
   */
  readonly low: number;
  readonly high: number;
  /**
   * Two-sided p-value of "no difference": twice the share of resampled means on the far side of
   * zero from the observed mean (zero counting as both sides), with the observed sample counted
   * among the resamples — `min(1, 2·(k + 1)/(R + 1))` — so it is never 0 (1 when the observed
   * mean is 0).
   */
  readonly pValue: number;
  readonly resamples: number;
}

/**
 * Paired bootstrap of per-example values `a` and `b` (e.g. per-document perplexities of two
 * policies; same examples, same order): resamples the examples with replacement, keeping each
 * example's pair together, and reports the mean difference, its percentile interval and a
 * two-sided p-value (Koehn, 2004; Efron & Tibshirani, 1993). It asks nothing of the
 * differences' distribution, unlike the paired t statistic of `pairedComparison`.
 *
 * @example
 * ```ts
 * const result = pairedBootstrap([1.2, 1.5, 1.1, 1.9], [1.4, 1.6, 1.3, 2.2], { resamples: 2000 });
 * result.meanDifference; // -0.2: `a` lower on average
 * ```
 * @throws LetheError `E_ARG` naming `a` when empty, `a[i]` or `b[i]` for a value that is not
 *   finite, `options.resamples` (not an integer in [1, 10⁷]), `options.seed` or
 *   `options.confidence` (not in (0, 1)); `E_SHAPE` naming `b` when the lengths differ.
 */
export function pairedBootstrap(
  a: readonly number[],
  b: readonly number[],
  options: PairedBootstrapOptions = {},
): PairedBootstrap {
  checkPaired(a, b);
  a.forEach((x, i) => {
    requireFinite(x, `a[${i}]`);
    requireFinite(b[i]!, `b[${i}]`);
  });
  const resamples = options.resamples ?? 10_000;
  if (!Number.isInteger(resamples) || resamples < 1 || resamples > 10_000_000) {
    throw new LetheError(
      'E_ARG',
      `must be an integer in [1, 10⁷], got ${resamples}`,
      'options.resamples',
    );
  }
  const confidence = options.confidence ?? 0.95;
  if (!(confidence > 0 && confidence < 1)) {
    throw new LetheError('E_ARG', `must be in (0, 1), got ${confidence}`, 'options.confidence');
  }
  const seed = options.seed ?? 0;
  if (!Number.isSafeInteger(seed) || seed < 0) {
    throw new LetheError('E_ARG', `must be a non-negative integer, got ${seed}`, 'options.seed');
  }
  const n = a.length;
  const differences = a.map((x, i) => x - b[i]!);
  const meanDifference = differences.reduce((sum, d) => sum + d, 0) / n;
  const random = SeededRandom.forExample('paired-bootstrap', seed, 0);
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += differences[random.int(0, n - 1)]!;
    means[r] = sum / n;
  }
  means.sort();
  // the k-th smallest and the k-th largest resampled means, k = ⌊R·(1 − confidence)/2⌋
  const k = Math.min(
    Math.floor((resamples * (1 - confidence)) / 2),
    Math.floor((resamples - 1) / 2),
  );
  let farSide = 0;
  for (const mean of means) {
    if (meanDifference > 0 ? mean <= 0 : meanDifference < 0 ? mean >= 0 : true) farSide += 1;
  }
  const pValue = Math.min(1, (2 * (farSide + 1)) / (resamples + 1));
  return { n, meanDifference, low: means[k]!, high: means[resamples - 1 - k]!, pValue, resamples };
}
