import { expect } from 'vitest';
import { LetheError } from '../../src/errors';
import type { tf } from '../../src/tf';

/** Asserts |actual − expected| ≤ atol + rtol·|expected| element-wise. */
export function expectClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  rtol = 1e-5,
  atol = 1e-7,
): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const tolerance = atol + rtol * Math.abs(expected[i]!);
    if (!(Math.abs(actual[i]! - expected[i]!) <= tolerance)) {
      throw new Error(
        `element ${i}: ${actual[i]} vs expected ${expected[i]} (tolerance ${tolerance})`,
      );
    }
  }
}

/** Asserts that `fn` throws a LetheError with `code` naming `argument`. */
export function expectLetheError(fn: () => unknown, code: string, argument?: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(LetheError);
  expect((caught as LetheError).code).toBe(code);
  if (argument !== undefined) expect((caught as LetheError).argument).toBe(argument);
}

/** Host copy of a tensor's values as a plain number array. */
export function values(t: tf.Tensor): number[] {
  return Array.from(t.dataSync());
}
