import { checkPaired } from './paired-values';
import { requireFinite } from './validate';

/** Paired statistics of two methods on the same documents (SOL's Table 1). */
export interface PairedComparison {
  /** Mean of `a − b` over documents (negative: `a` has the lower perplexity). */
  readonly meanDifference: number;
  /** Standard deviation of the differences. */
  readonly sdDifference: number;
  /** Paired t statistic `mean / (sd / √n)` (0 when every difference is 0). */
  readonly t: number;
  /** Share of documents where `a` is strictly lower than `b`. */
  readonly winRate: number;
  /** Documents compared. */
  readonly n: number;
}

/**
 * Paired comparison of per-document values `a` and `b` (e.g. perplexities; same documents, same
 * order): the mean and standard deviation of `a − b`, the paired t statistic and the share of
 * documents where `a` is lower.
 *
 * @example
 * ```ts
 * pairedComparison([1, 2, 3, 5], [2, 2, 4, 4]); // mean −0.25, win rate 0.5
 * ```
 * @throws LetheError `E_SHAPE` naming `b` when the lengths differ, `E_ARG` naming `a` when empty,
 *   `a[i]` or `b[i]` for a value that is not finite.
 */
export function pairedComparison(a: readonly number[], b: readonly number[]): PairedComparison {
  checkPaired(a, b);
  const n = a.length;
  a.forEach((x, i) => {
    requireFinite(x, `a[${i}]`);
    requireFinite(b[i]!, `b[${i}]`);
  });
  const differences = a.map((x, i) => x - b[i]!);
  const mean = differences.reduce((s, d) => s + d, 0) / n;
  const variance = n < 2 ? 0 : differences.reduce((s, d) => s + (d - mean) ** 2, 0) / (n - 1);
  const sd = Math.sqrt(variance);
  return {
    meanDifference: mean,
    sdDifference: sd,
    t: sd === 0 ? 0 : mean / (sd / Math.sqrt(n)),
    winRate: differences.filter((d) => d < 0).length / n,
    n,
  };
}
