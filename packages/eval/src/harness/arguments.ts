import { LetheError } from '@lethe/core';

/** `null`, `undefined`, `an array` or the `typeof` of a value: what an argument was instead. */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  return Array.isArray(value) ? 'an array' : typeof value;
}

/**
 * Checks an argument that must be an object (a plain object or a class instance, not an array).
 * For the public functions of the harness, so that `null`, `undefined` or a number gets a coded
 * error rather than a `TypeError` from the first property read.
 *
 * @param what - what the argument is, for the message (e.g. `a CellEnvironment`).
 * @throws LetheError `E_ARG` naming `argument` otherwise.
 */
export function requireObject<T>(value: T, argument: string, what: string): NonNullable<T> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LetheError('E_ARG', `must be ${what}, got ${kindOf(value)}`, argument);
  }
  return value as NonNullable<T>;
}

/**
 * Checks an argument that must be an array.
 *
 * @throws LetheError `E_ARG` naming `argument` otherwise.
 */
export function requireArray<T>(value: readonly T[], argument: string): readonly T[] {
  if (!Array.isArray(value)) {
    throw new LetheError('E_ARG', `must be an array, got ${kindOf(value)}`, argument);
  }
  return value;
}

/**
 * Checks an argument that must be a function (a clock, a callback).
 *
 * @param what - what the function is, for the message (e.g. `a clock () => milliseconds`).
 * @throws LetheError `E_ARG` naming `argument` otherwise.
 */
export function requireFunction<T>(value: T, argument: string, what: string): T {
  if (typeof value !== 'function') {
    throw new LetheError('E_ARG', `must be ${what}, got ${kindOf(value)}`, argument);
  }
  return value;
}
