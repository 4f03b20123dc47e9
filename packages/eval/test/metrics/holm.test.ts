import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { holmAdjust } from '../../src/metrics/holm';

/** Holm's procedure as published: reject in ascending order while p₍ₖ₎ ≤ α / (m − k + 1). */
function holmRejects(pValues: readonly number[], alpha: number): boolean[] {
  const m = pValues.length;
  const order = pValues.map((p, i) => ({ p, i })).sort((x, y) => x.p - y.p || x.i - y.i);
  const rejected = pValues.map(() => false);
  for (let k = 0; k < m; k++) {
    if (order[k]!.p > alpha / (m - k)) break;
    rejected[order[k]!.i] = true;
  }
  return rejected;
}

describe('holmAdjust', () => {
  it('adjusts the documented example, and leaves one p-value as it is', () => {
    const adjusted = holmAdjust([0.01, 0.04, 0.03]);
    [0.03, 0.06, 0.06].forEach((p, i) => expect(adjusted[i]).toBeCloseTo(p, 12));
    expect(holmAdjust([0.2])).toEqual([0.2]);
    expect(holmAdjust([])).toEqual([]);
    expect(holmAdjust([0.5, 0.9])).toEqual([1, 1]);
  });

  it('rejects at α exactly what Holm’s step-down procedure rejects, never below the raw p (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 12 }),
        fc.constantFrom(0.01, 0.05, 0.1),
        (pValues, alpha) => {
          const adjusted = holmAdjust(pValues);
          expect(adjusted.map((p) => p <= alpha)).toEqual(holmRejects(pValues, alpha));
          adjusted.forEach((p, i) => {
            expect(p).toBeGreaterThanOrEqual(pValues[i]!);
            expect(p).toBeLessThanOrEqual(1);
          });
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses a value that is not a p-value, naming it', () => {
    expectLetheError(() => holmAdjust([0.1, 1.5]), 'E_ARG', 'pValues[1]');
    expectLetheError(() => holmAdjust([Number.NaN]), 'E_ARG', 'pValues[0]');
  });
});
