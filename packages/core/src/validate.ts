import { LetheError, type LetheErrorCode } from './errors';

/**
 * Throws (`code`, default `E_ARG`, naming `argument`) unless `value` is an object of options: not
 * `null`, `undefined`, an array or a primitive. Returns the value for chaining.
 */
export function assertRecord<T>(value: T, argument: string, code: LetheErrorCode = 'E_ARG'): T {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
    throw new LetheError(code, `must be an object, got ${got}`, argument);
  }
  return value;
}

/** Throws `E_ARG` unless `value` is an integer ≥ `min`. Returns the value for chaining. */
export function assertInteger(
  value: number,
  argument: string,
  min = Number.NEGATIVE_INFINITY,
): number {
  if (!Number.isInteger(value)) {
    throw new LetheError('E_ARG', `must be an integer, got ${value}`, argument);
  }
  if (value < min) throw new LetheError('E_ARG', `must be ≥ ${min}, got ${value}`, argument);
  return value;
}

/** Throws `E_ARG` unless `value` is a finite number within [min, max]. */
export function assertFiniteInRange(
  value: number,
  argument: string,
  min = Number.NEGATIVE_INFINITY,
  max = Number.POSITIVE_INFINITY,
): number {
  if (!Number.isFinite(value))
    throw new LetheError('E_ARG', `must be finite, got ${value}`, argument);
  if (value < min || value > max) {
    throw new LetheError('E_ARG', `must be in [${min}, ${max}], got ${value}`, argument);
  }
  return value;
}

/** Throws `E_BUDGET` unless `value` lies in (0, 1]. */
export function assertFraction(value: number, argument: string): number {
  if (!(value > 0 && value <= 1)) {
    throw new LetheError('E_BUDGET', `must be in (0, 1], got ${value}`, argument);
  }
  return value;
}

/** Throws `E_ARG` if any element of `values` is NaN; names the first bad index. */
export function assertNoNaN(values: ArrayLike<number>, argument: string): void {
  for (let i = 0; i < values.length; i++) {
    if (Number.isNaN(values[i])) throw new LetheError('E_ARG', `NaN at index ${i}`, argument);
  }
}

/** Throws `E_SHAPE` unless `values.length === expected`. */
export function assertLength(values: ArrayLike<unknown>, expected: number, argument: string): void {
  if (values.length !== expected) {
    throw new LetheError('E_SHAPE', `expected length ${expected}, got ${values.length}`, argument);
  }
}
