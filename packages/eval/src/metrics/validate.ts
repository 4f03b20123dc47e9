import { LetheError } from '@lethe/core';

/** Throws `E_ARG` unless `value` is a finite number (not NaN, not ±Infinity). */
export function requireFinite(value: number, argument: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new LetheError('E_ARG', `must be a finite number, got ${String(value)}`, argument);
  }
  return value;
}

/** Throws `E_ARG` unless `value` is a finite number ≥ 0. */
export function requireNonNegative(value: number, argument: string): number {
  if (requireFinite(value, argument) < 0) {
    throw new LetheError('E_ARG', `must be ≥ 0, got ${value}`, argument);
  }
  return value;
}

/** Throws `E_ARG` unless `value` is a finite number > 0. */
export function requirePositive(value: number, argument: string): number {
  if (requireFinite(value, argument) <= 0) {
    throw new LetheError('E_ARG', `must be > 0, got ${value}`, argument);
  }
  return value;
}

/** Throws `E_ARG` unless `value` is an integer ≥ `min`. */
export function requireInteger(value: number, min: number, argument: string): number {
  if (!Number.isInteger(value) || value < min) {
    throw new LetheError('E_ARG', `must be an integer ≥ ${min}, got ${String(value)}`, argument);
  }
  return value;
}

/** Throws `E_ARG` unless `value` is a finite number in [0, 1]. */
export function requireFraction(value: number, argument: string): number {
  if (requireFinite(value, argument) < 0 || value > 1) {
    throw new LetheError('E_ARG', `must be in [0, 1], got ${value}`, argument);
  }
  return value;
}

/** Throws `E_ARG` when `values` is empty (or not an array). */
export function requireNonEmpty<T>(values: readonly T[], argument: string): readonly T[] {
  if (!Array.isArray(values) || values.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty array', argument);
  }
  return values;
}

/** Throws `E_SHAPE` unless the two arrays have the same length. */
export function requireSameLength(
  a: readonly unknown[],
  aName: string,
  b: readonly unknown[],
  bName: string,
): void {
  if (a.length !== b.length) {
    throw new LetheError(
      'E_SHAPE',
      `has length ${b.length} but ${aName} has length ${a.length}; they must match`,
      bName,
    );
  }
}
