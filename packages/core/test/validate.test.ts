import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  assertFiniteInRange,
  assertFraction,
  assertInteger,
  assertLength,
  assertNoNaN,
  assertRecord,
} from '../src/validate';

describe('validators', () => {
  it('return or accept valid values', () => {
    expect(assertInteger(3, 'n', 0)).toBe(3);
    expect(assertFiniteInRange(0.5, 'x', 0, 1)).toBe(0.5);
    expect(assertFraction(1, 'budget')).toBe(1);
    expect(() => assertNoNaN([1, Number.POSITIVE_INFINITY], 'xs')).not.toThrow();
    expect(() => assertLength(new Int32Array(2), 2, 'xs')).not.toThrow();
    const options = { budget: 1 };
    expect(assertRecord(options, 'options')).toBe(options);
  });

  it('throw coded LetheErrors naming the argument', () => {
    expectLetheError(() => assertInteger(1.5, 'n'), 'E_ARG', 'n');
    expectLetheError(() => assertInteger(-1, 'n', 0), 'E_ARG', 'n');
    expectLetheError(() => assertFiniteInRange(Number.NaN, 'x'), 'E_ARG', 'x');
    expectLetheError(() => assertFiniteInRange(2, 'x', 0, 1), 'E_ARG', 'x');
    expectLetheError(() => assertFraction(0, 'budget'), 'E_BUDGET', 'budget');
    expectLetheError(() => assertNoNaN([0, Number.NaN], 'xs'), 'E_ARG', 'xs');
    expectLetheError(() => assertLength([1], 2, 'xs'), 'E_SHAPE', 'xs');
    for (const bad of [undefined, null, 0, 'x', [1]]) {
      expectLetheError(() => assertRecord(bad, 'options'), 'E_ARG', 'options');
    }
    expectLetheError(() => assertRecord(null, 'budget', 'E_BUDGET'), 'E_BUDGET', 'budget');
  });
});
