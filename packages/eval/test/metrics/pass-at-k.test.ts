import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { meanPassAtK, passAtK } from '../../src/metrics/index';

/** Fraction of all k-subsets of n samples (the first c correct) holding a correct sample. */
function bruteForcePassAtK(n: number, c: number, k: number): number {
  let hits = 0;
  let subsets = 0;
  const visit = (start: number, left: number, hasCorrect: boolean): void => {
    if (left === 0) {
      subsets += 1;
      if (hasCorrect) hits += 1;
      return;
    }
    for (let i = start; i <= n - left; i++) visit(i + 1, left - 1, hasCorrect || i < c);
  };
  visit(0, k, false);
  return hits / subsets;
}

describe('passAtK', () => {
  it('matches brute-force enumeration of every k-subset for n ≤ 10', () => {
    for (let n = 1; n <= 10; n++) {
      for (let c = 0; c <= n; c++) {
        for (let k = 1; k <= n; k++) {
          expect(passAtK(n, c, k)).toBeCloseTo(bruteForcePassAtK(n, c, k), 12);
        }
      }
    }
  });

  it('has the closed forms pass@1 = c/n, 0 without correct samples, 1 when n − c < k', () => {
    expect(passAtK(20, 7, 1)).toBeCloseTo(7 / 20, 14);
    expect(passAtK(50, 0, 10)).toBe(0);
    expect(passAtK(10, 8, 3)).toBe(1);
    expect(passAtK(5, 5, 1)).toBe(1);
  });

  it('stays finite and accurate where binomial coefficients overflow', () => {
    // C(2000, 1000) overflows a double; 1 − C(1999, 1000)/C(2000, 1000) = 1000/2000 exactly.
    expect(passAtK(2000, 1, 1000)).toBeCloseTo(0.5, 12);
    const value = passAtK(10_000, 3, 200);
    // 1 − (1 − k/n)(1 − k/(n−1))(1 − k/(n−2)) for c = 3.
    const closed = 1 - (1 - 200 / 10_000) * (1 - 200 / 9_999) * (1 - 200 / 9_998);
    expect(value).toBeCloseTo(closed, 14);
  });

  it('rejects NaN, non-integers, negative counts, c > n and k > n, naming the argument', () => {
    expectLetheError(() => passAtK(Number.NaN, 1, 1), 'E_ARG', 'n');
    expectLetheError(() => passAtK(0, 0, 1), 'E_ARG', 'n');
    expectLetheError(() => passAtK(5, -1, 1), 'E_ARG', 'c');
    expectLetheError(() => passAtK(5, 1.5, 1), 'E_ARG', 'c');
    expectLetheError(() => passAtK(5, 6, 1), 'E_ARG', 'c');
    expectLetheError(() => passAtK(5, 1, 0), 'E_ARG', 'k');
    expectLetheError(() => passAtK(5, 1, 6), 'E_ARG', 'k');
    expectLetheError(() => passAtK(5, 1, Number.NaN), 'E_ARG', 'k');
  });
});

describe('meanPassAtK', () => {
  it('averages the per-problem estimator', () => {
    const problems = [
      { n: 8, c: 0 },
      { n: 8, c: 3 },
      { n: 10, c: 10 },
    ];
    const expected = (0 + bruteForcePassAtK(8, 3, 4) + 1) / 3;
    expect(meanPassAtK(problems, 4)).toBeCloseTo(expected, 14);
  });

  it('rejects an empty list and names the offending problem', () => {
    expectLetheError(() => meanPassAtK([], 1), 'E_ARG', 'problems');
    expectLetheError(
      () =>
        meanPassAtK(
          [
            { n: 4, c: 1 },
            { n: 4, c: 5 },
          ],
          1,
        ),
      'E_ARG',
      'problems[1].c',
    );
    expectLetheError(
      () =>
        meanPassAtK(
          [
            { n: 4, c: 1 },
            { n: -1, c: 0 },
          ],
          1,
        ),
      'E_ARG',
      'problems[1].n',
    );
    expectLetheError(() => meanPassAtK([{ n: 4, c: 1 }], 5), 'E_ARG', 'k');
  });
});
