import { LetheError } from '@lethe/tensor';
import fc from 'fast-check';
import { expect } from 'vitest';

/** Asserts that `fn` throws a LetheError with `code` and, when given, `argument`. */
export function expectLetheError(fn: () => unknown, code: string, argument?: string): LetheError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(LetheError);
  const error = caught as LetheError;
  expect(error.code).toBe(code);
  if (argument !== undefined) expect(error.argument).toBe(argument);
  return error;
}

/** Seeds as fast-check generates them (non-negative safe integers, small and large). */
export const seedArb = fc.oneof(
  fc.integer({ min: 0, max: 1000 }),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
);

/** Example indices. */
export const indexArb = fc.integer({ min: 0, max: 1_000_000 });
