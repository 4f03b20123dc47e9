import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { aggregate, poolAggregates } from '../../src/metrics/index';

describe('aggregate', () => {
  it('gives the mean and sample standard deviation / √n', () => {
    // mean 5, Σ(x − 5)² = 32 over 8 values: s² = 32/7, stderr = √(32/7/8).
    const result = aggregate([2, 4, 4, 4, 5, 5, 7, 9]);
    expect(result.mean).toBe(5);
    expect(result.n).toBe(8);
    expect(result.stderr).toBeCloseTo(Math.sqrt(32 / 7 / 8), 14);
  });

  it('has stderr 0 for one value and for constant values', () => {
    expect(aggregate([0.25])).toEqual({ mean: 0.25, stderr: 0, n: 1 });
    expect(aggregate([3, 3, 3])).toEqual({ mean: 3, stderr: 0, n: 3 });
  });

  it('gives √(p(1 − p)/(n − 1)) for 0/1 outcomes', () => {
    const outcomes = [1, 0, 0, 1, 1, 0, 1, 1, 1, 0];
    const p = 0.6;
    const result = aggregate(outcomes);
    expect(result.mean).toBeCloseTo(p, 14);
    expect(result.stderr).toBeCloseTo(Math.sqrt((p * (1 - p)) / (outcomes.length - 1)), 14);
  });

  it('rejects empty arrays, NaN and infinities', () => {
    expectLetheError(() => aggregate([]), 'E_ARG', 'values');
    expectLetheError(() => aggregate([1, Number.NaN]), 'E_ARG', 'values[1]');
    expectLetheError(() => aggregate([Number.POSITIVE_INFINITY]), 'E_ARG', 'values[0]');
  });
});

describe('poolAggregates', () => {
  it('equals aggregate() of the concatenated groups', () => {
    const group = fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), {
      minLength: 1,
      maxLength: 12,
    });
    fc.assert(
      fc.property(fc.array(group, { minLength: 1, maxLength: 5 }), (groups) => {
        const pooled = poolAggregates(groups.map((values) => aggregate(values)));
        const direct = aggregate(groups.flat());
        expect(pooled.n).toBe(direct.n);
        expect(pooled.mean).toBeCloseTo(direct.mean, 8);
        expect(pooled.stderr).toBeCloseTo(direct.stderr, 8);
      }),
    );
  });

  it('rejects empty lists and malformed parts', () => {
    expectLetheError(() => poolAggregates([]), 'E_ARG', 'parts');
    expectLetheError(
      () =>
        poolAggregates([
          { mean: 1, stderr: 0, n: 1 },
          { mean: 1, stderr: 0, n: 0 },
        ]),
      'E_ARG',
      'parts[1].n',
    );
    expectLetheError(
      () => poolAggregates([{ mean: Number.NaN, stderr: 0, n: 2 }]),
      'E_ARG',
      'parts[0].mean',
    );
    expectLetheError(
      () => poolAggregates([{ mean: 1, stderr: -1, n: 2 }]),
      'E_ARG',
      'parts[0].stderr',
    );
    expectLetheError(
      () => poolAggregates([{ mean: 1, stderr: 0.5, n: 1 }]),
      'E_ARG',
      'parts[0].stderr',
    );
  });
});
