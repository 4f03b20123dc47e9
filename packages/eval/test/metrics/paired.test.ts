import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { pairedAccuracy, pairedComparison } from '../../src/metrics/index';

describe('pairedComparison', () => {
  it('gives the mean, sd, t and win rate of the per-document differences', () => {
    const result = pairedComparison([1, 2, 3, 5], [2, 2, 4, 4]);
    // differences −1, 0, −1, 1: mean −0.25, sd √(2.75/3)
    expect(result.meanDifference).toBeCloseTo(-0.25, 12);
    expect(result.sdDifference).toBeCloseTo(Math.sqrt(2.75 / 3), 12);
    expect(result.t).toBeCloseTo(-0.25 / (Math.sqrt(2.75 / 3) / 2), 12);
    expect(result.winRate).toBe(0.5);
    expect(pairedComparison([1, 1], [1, 1]).t).toBe(0);
    expectLetheError(() => pairedComparison([], []), 'E_ARG', 'a');
    expectLetheError(() => pairedComparison([1], [1, 2]), 'E_SHAPE', 'b');
    expectLetheError(() => pairedComparison([], []), 'E_ARG', 'a');
    expectLetheError(() => pairedComparison([1], null as unknown as number[]), 'E_SHAPE', 'b');
    expectLetheError(() => pairedComparison([1, Number.NaN], [1, 2]), 'E_ARG', 'a[1]');
    expectLetheError(
      () => pairedComparison([1, 2], [Number.POSITIVE_INFINITY, 2]),
      'E_ARG',
      'b[0]',
    );
  });
});

describe('pairedAccuracy', () => {
  /** `C(n, k)` exactly, as a BigInt. */
  const choose = (n: number, k: number): bigint => {
    let c = 1n;
    for (let i = 0; i < k; i++) c = (c * BigInt(n - i)) / BigInt(i + 1);
    return c;
  };

  it('counts the discordant pairs and gives the exact two-sided McNemar p-value', () => {
    for (const [b, c] of [
      [0, 0],
      [3, 1],
      [1, 3],
      [10, 2],
      [7, 7],
      [40, 25],
    ] as const) {
      const a = [...Array(b).fill(true), ...Array(c).fill(false), true, false];
      const other = [...Array(b).fill(false), ...Array(c).fill(true), true, false];
      const paired = pairedAccuracy(a, other);
      expect(paired).toMatchObject({ n: b + c + 2, onlyA: b, onlyB: c });
      expect(paired.accuracyA).toBe((b + 1) / (b + c + 2));
      const n = b + c;
      let tail = 0n;
      for (let i = 0; i <= Math.min(b, c); i++) tail += choose(n, i);
      const expected = n === 0 ? 1 : Math.min(1, (2 * Number(tail)) / 2 ** n);
      expect(paired.pValue).toBeCloseTo(expected, 12);
    }
    // 6 discordant pairs all one way: p = 2 / 64.
    expect(pairedAccuracy(Array(6).fill(true), Array(6).fill(false)).pValue).toBeCloseTo(
      1 / 32,
      15,
    );
    expectLetheError(() => pairedAccuracy([], []), 'E_ARG', 'a');
    expectLetheError(() => pairedAccuracy([true], [true, false]), 'E_SHAPE', 'b');
    expectLetheError(() => pairedAccuracy([], []), 'E_ARG', 'a');
    expectLetheError(() => pairedAccuracy([true, 1 as never], [true, false]), 'E_ARG', 'a[1]');
  });
});
