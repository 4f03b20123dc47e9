import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rankFitness } from '../src/index';

describe('rankFitness', () => {
  it('sorts ascending, NaN last (after +Infinity), ties in index order', () => {
    const order = rankFitness([3, Number.NaN, -1, Number.POSITIVE_INFINITY, 3, Number.NaN, -1]);
    expect(Array.from(order)).toEqual([2, 6, 0, 4, 3, 1, 5]);
  });

  it('is a permutation whose values are non-decreasing (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.double(), fc.constant(Number.NaN)), { minLength: 1 }),
        (f) => {
          fc.pre(f.some((v) => !Number.isNaN(v)));
          const order = Array.from(rankFitness(f));
          expect([...order].sort((a, b) => a - b)).toEqual(f.map((_, i) => i));
          const sorted = order.map((i) => f[i]!);
          const firstNaN = sorted.findIndex(Number.isNaN);
          const finite = firstNaN === -1 ? sorted : sorted.slice(0, firstNaN);
          for (let i = 1; i < finite.length; i++)
            expect(finite[i]!).toBeGreaterThanOrEqual(finite[i - 1]!);
          if (firstNaN !== -1) expect(sorted.slice(firstNaN).every(Number.isNaN)).toBe(true);
        },
      ),
    );
  });

  it('rejects all-NaN and non-numbers', () => {
    expectLetheError(() => rankFitness([Number.NaN, Number.NaN]), 'E_ARG', 'fitness');
    expectLetheError(() => rankFitness([1, '2' as unknown as number]), 'E_ARG', 'fitness[1]');
  });
});
