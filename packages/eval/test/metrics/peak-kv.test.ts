import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { peakKvReduction, realisedBudget } from '../../src/metrics/index';

describe('peakKvReduction (NGC eq. 7)', () => {
  it('averages the per-example factor full peak / policy peak', () => {
    const full = [480, 400, 600];
    const policy = [200, 200, 200];
    const result = peakKvReduction(policy, full);
    // E[full/policy] = (2.4 + 2 + 3)/3, not mean(full)/mean(policy) = 2.4666….
    expect(result.mean).toBeCloseTo((2.4 + 2 + 3) / 3, 14);
    expect(result.n).toBe(3);
    const deviations = [2.4, 2, 3].map((x) => (x - result.mean) ** 2);
    expect(result.stderr).toBeCloseTo(Math.sqrt(deviations.reduce((a, b) => a + b) / 2 / 3), 14);
  });

  it('is 1 for the full cache itself and 2 at half the peak memory', () => {
    expect(peakKvReduction([512, 300], [512, 300]).mean).toBe(1);
    expect(peakKvReduction([256, 150], [512, 300])).toEqual({ mean: 2, stderr: 0, n: 2 });
  });

  it('rejects empty, mismatched, NaN, zero and negative peaks', () => {
    expectLetheError(() => peakKvReduction([], []), 'E_ARG', 'fullPeaks');
    expectLetheError(() => peakKvReduction([1, 2], [1]), 'E_SHAPE', 'policyPeaks');
    expectLetheError(() => peakKvReduction([1, Number.NaN], [1, 2]), 'E_ARG', 'policyPeaks[1]');
    expectLetheError(() => peakKvReduction([0], [10]), 'E_ARG', 'policyPeaks[0]');
    expectLetheError(() => peakKvReduction([5], [-10]), 'E_ARG', 'fullPeaks[0]');
  });
});

describe('realisedBudget', () => {
  it('averages the per-example fraction policy peak / full peak', () => {
    const result = realisedBudget([120, 150, 100], [480, 300, 400]);
    expect(result.mean).toBeCloseTo((0.25 + 0.5 + 0.25) / 3, 14);
    expect(result.n).toBe(3);
  });

  it('is the per-example reciprocal of the eq. 7 factor', () => {
    const policy = [130, 210, 90];
    const full = [400, 420, 380];
    const reduction = peakKvReduction(policy, full);
    const budget = realisedBudget(policy, full);
    const reciprocals = policy.map((p, i) => full[i]! / p);
    expect(reduction.mean).toBeCloseTo(reciprocals.reduce((a, b) => a + b) / 3, 12);
    expect(budget.mean).toBeCloseTo(
      policy.map((p, i) => p / full[i]!).reduce((a, b) => a + b) / 3,
      12,
    );
  });

  it('rejects invalid peaks, naming the argument', () => {
    expectLetheError(() => realisedBudget([1], []), 'E_ARG', 'fullPeaks');
    expectLetheError(() => realisedBudget([-1], [2]), 'E_ARG', 'policyPeaks[0]');
    expectLetheError(() => realisedBudget([1, 1], [2]), 'E_SHAPE', 'fullPeaks');
  });
});
