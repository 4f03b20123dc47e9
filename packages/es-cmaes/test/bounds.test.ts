import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { insideBounds, mirrorIntoBounds, resolveBounds } from '../src/index';

describe('box bounds by mirroring', () => {
  const box = resolveBounds([0, -1, 2, Number.NEGATIVE_INFINITY], [1, 1, 2, 5], 4)!;

  it('leaves points inside unchanged and reflects points outside at the bound they crossed', () => {
    expect(mirrorIntoBounds([0.5, 0, 2, -100], box, new Float64Array(4))).toEqual(
      new Float64Array([0.5, 0, 2, -100]),
    );
    // 1.25 → 0.75; −1.5 → −0.5; l = u pins; 6 → 4 (one-sided, reflected once).
    expect(mirrorIntoBounds([1.25, -1.5, 7, 6], box, new Float64Array(4))).toEqual(
      new Float64Array([0.75, -0.5, 2, 4]),
    );
    // Far outside: periodic with period 2 (u − l): 2.25 → 0.25, −0.25 → 0.25, 3.5 → 0.5.
    const out = new Float64Array(4);
    mirrorIntoBounds([2.25, -3.25, 2, 5], box, out);
    expect(out[0]).toBeCloseTo(0.25, 14);
    expect(out[1]).toBeCloseTo(0.75, 14);
  });

  it('always lands inside the box (property)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        fc.double({ min: 1e-3, max: 1e3, noNaN: true }),
        fc.double({ min: -1e9, max: 1e9, noNaN: true }),
        (l, width, x) => {
          const b = resolveBounds([l], [l + width], 1)!;
          const y = mirrorIntoBounds([x], b, new Float64Array(1))[0]!;
          expect(y).toBeGreaterThanOrEqual(l);
          expect(y).toBeLessThanOrEqual(l + width);
          expect(insideBounds([y], b)).toBe(true);
        },
      ),
    );
  });

  it('is undefined when nothing is bounded, and scalars expand to every coordinate', () => {
    expect(resolveBounds(undefined, undefined, 3)).toBeUndefined();
    expect(resolveBounds(Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY, 3)).toBeUndefined();
    const b = resolveBounds(-5, 5, 3)!;
    expect(Array.from(b.lower)).toEqual([-5, -5, -5]);
    expect(Array.from(b.upper)).toEqual([5, 5, 5]);
  });

  it('rejects bad bounds with coded errors', () => {
    expectLetheError(() => resolveBounds([0, 0], 1, 3), 'E_SHAPE', 'lower');
    expectLetheError(() => resolveBounds(0, [1, 1], 3), 'E_SHAPE', 'upper');
    expectLetheError(() => resolveBounds(1, 0, 2), 'E_ARG', 'upper');
    expectLetheError(() => resolveBounds(Number.NaN, 0, 2), 'E_ARG', 'lower');
    expectLetheError(() => resolveBounds(Number.POSITIVE_INFINITY, undefined, 2), 'E_ARG', 'lower');
    expectLetheError(() => resolveBounds(undefined, [0, Number.NaN], 2), 'E_ARG', 'upper');
  });
});
