import { LetheError } from '@lethe/core';
import { checkPaired } from './paired-values';

/** Two methods' correctness on the same examples, compared pairwise (McNemar). */
export interface PairedAccuracy {
  /** Examples compared. */
  readonly n: number;
  /** Accuracy of `a` and of `b`. */
  readonly accuracyA: number;
  readonly accuracyB: number;
  /** Examples only `a` solved, and only `b` solved (the discordant pairs). */
  readonly onlyA: number;
  readonly onlyB: number;
  /**
   * Exact two-sided McNemar p-value: under "neither method is better", each discordant pair is
   * `a`'s with probability ½, so `p = min(1, 2 · P[X ≤ min(onlyA, onlyB)])` for
   * `X ~ Binomial(onlyA + onlyB, ½)` (1 without discordant pairs).
   */
  readonly pValue: number;
}

/**
 * Paired comparison of per-example correctness `a` and `b` (same examples, same order): both
 * accuracies, the discordant pairs and the exact McNemar p-value — what tells two policies apart
 * on the same examples where their accuracies' intervals overlap.
 *
 * @example
 * ```ts
 * pairedAccuracy(Array(6).fill(true), Array(6).fill(false)).pValue; // 2 / 64
 * ```
 * @throws LetheError `E_ARG` naming `a` when empty, `a[i]` or `b[i]` for a value that is not a
 *   boolean; `E_SHAPE` naming `b` when the lengths differ.
 */
export function pairedAccuracy(a: readonly boolean[], b: readonly boolean[]): PairedAccuracy {
  checkPaired(a, b);
  let onlyA = 0;
  let onlyB = 0;
  let correctA = 0;
  let correctB = 0;
  a.forEach((solvedA, i) => {
    const solvedB = b[i]!;
    if (typeof solvedA !== 'boolean') throw new LetheError('E_ARG', 'must be a boolean', `a[${i}]`);
    if (typeof solvedB !== 'boolean') throw new LetheError('E_ARG', 'must be a boolean', `b[${i}]`);
    if (solvedA) correctA += 1;
    if (solvedB) correctB += 1;
    if (solvedA && !solvedB) onlyA += 1;
    if (solvedB && !solvedA) onlyB += 1;
  });
  return {
    n: a.length,
    accuracyA: correctA / a.length,
    accuracyB: correctB / a.length,
    onlyA,
    onlyB,
    pValue: exactMcNemar(onlyA, onlyB),
  };
}

/** `min(1, 2 · P[X ≤ min(b, c)])`, `X ~ Binomial(b + c, ½)`, summed in log space. */
function exactMcNemar(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  let logChoose = 0; // log C(n, 0)
  let tail = 0;
  for (let i = 0; i <= k; i++) {
    if (i > 0) logChoose += Math.log(n - i + 1) - Math.log(i);
    tail += Math.exp(logChoose - n * Math.LN2);
  }
  return Math.min(1, 2 * tail);
}
