import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { pairedBootstrap } from '../../src/metrics/paired-bootstrap';

/**
 * The exact bootstrap distribution of the mean of `differences`: every one of the nⁿ ordered
 * resamples, equally likely. The bootstrap's p-value tends to twice the far side's probability.
 */
function exactFarSide(differences: readonly number[]): number {
  const n = differences.length;
  const observed = differences.reduce((s, d) => s + d, 0) / n;
  let far = 0;
  const total = n ** n;
  for (let code = 0; code < total; code++) {
    let sum = 0;
    let rest = code;
    for (let i = 0; i < n; i++) {
      sum += differences[rest % n]!;
      rest = Math.floor(rest / n);
    }
    const mean = sum / n;
    if (observed > 0 ? mean <= 0 : mean >= 0) far += 1;
  }
  return far / total;
}

describe('pairedBootstrap', () => {
  it('tends to the exact bootstrap distribution of a small sample (brute force over every resample)', () => {
    const a = [3, 1, 4, 1.5, 5];
    const b = [2, 2, 3, 1, 2];
    const differences = a.map((x, i) => x - b[i]!);
    const result = pairedBootstrap(a, b, { resamples: 200_000, seed: 3 });
    expect(result.meanDifference).toBeCloseTo(0.9, 12);
    expect(result.pValue).toBeCloseTo(Math.min(1, 2 * exactFarSide(differences)), 2);
    expect(result.low).toBeLessThan(result.meanDifference);
    expect(result.high).toBeGreaterThan(result.meanDifference);
    expect(result.n).toBe(5);
  });

  it('is the same for the same seed, and symmetric in its arguments', () => {
    const a = Array.from({ length: 40 }, (_, i) => Math.sin(i) + 2);
    const b = Array.from({ length: 40 }, (_, i) => Math.cos(i) + 2);
    const one = pairedBootstrap(a, b, { resamples: 3000, seed: 7 });
    expect(pairedBootstrap(a, b, { resamples: 3000, seed: 7 })).toEqual(one);
    const swapped = pairedBootstrap(b, a, { resamples: 3000, seed: 7 });
    expect(swapped.meanDifference).toBeCloseTo(-one.meanDifference, 12);
    expect(swapped.pValue).toBe(one.pValue);
    expect(swapped.low).toBeCloseTo(-one.high, 12);
  });

  it('finds a consistent shift and no difference where there is none', () => {
    const base = Array.from({ length: 64 }, (_, i) => 10 + ((i * 37) % 11) / 10);
    const shifted = base.map((x, i) => x - 0.5 + ((i % 3) - 1) * 0.05);
    const shift = pairedBootstrap(shifted, base, { resamples: 4000 });
    expect(shift.pValue).toBeCloseTo(2 / 4001, 10);
    expect(shift.high).toBeLessThan(0);
    const same = pairedBootstrap(base, base, { resamples: 1000 });
    expect(same).toMatchObject({ meanDifference: 0, low: 0, high: 0, pValue: 1 });
  });

  it('refuses bad input, naming the argument', () => {
    expectLetheError(() => pairedBootstrap([], []), 'E_ARG', 'a');
    expectLetheError(() => pairedBootstrap([1, 2], [1]), 'E_SHAPE', 'b');
    expectLetheError(() => pairedBootstrap([1, Number.NaN], [1, 2]), 'E_ARG', 'a[1]');
    expectLetheError(
      () => pairedBootstrap([1], [1], { resamples: 0 }),
      'E_ARG',
      'options.resamples',
    );
    expectLetheError(
      () => pairedBootstrap([1], [1], { confidence: 1 }),
      'E_ARG',
      'options.confidence',
    );
    expectLetheError(() => pairedBootstrap([1], [1], { seed: -1 }), 'E_ARG', 'options.seed');
  });
});
