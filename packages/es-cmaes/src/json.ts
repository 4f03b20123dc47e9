import { LetheError } from '@lethe/core';

/**
 * A float64 in JSON without loss: a plain number when `JSON.stringify` keeps it exactly
 * (finite, not −0), else one of the strings `'NaN'`, `'Infinity'`, `'-Infinity'`, `'-0'`.
 * JavaScript prints finite doubles with the shortest digits that parse back to the same bits,
 * so a state survives `JSON.parse(JSON.stringify(state))` bit for bit.
 */
export type JsonNumber = number | 'NaN' | 'Infinity' | '-Infinity' | '-0';

/** Encodes one float64 as a {@link JsonNumber}. */
export function encodeNumber(x: number): JsonNumber {
  if (Number.isFinite(x)) return Object.is(x, -0) ? '-0' : x;
  return Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity';
}

/** Encodes an array of float64s. */
export function encodeArray(values: ArrayLike<number>): JsonNumber[] {
  const out: JsonNumber[] = new Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = encodeNumber(values[i]!);
  return out;
}

/**
 * Decodes a {@link JsonNumber}.
 *
 * @throws LetheError `E_FORMAT` naming `field` for anything else.
 */
export function decodeNumber(value: unknown, field: string): number {
  if (typeof value === 'number') return value;
  switch (value) {
    case 'NaN':
      return Number.NaN;
    case 'Infinity':
      return Number.POSITIVE_INFINITY;
    case '-Infinity':
      return Number.NEGATIVE_INFINITY;
    case '-0':
      return -0;
    default:
      throw new LetheError('E_FORMAT', `not a number: ${JSON.stringify(value)}`, field);
  }
}

/**
 * Decodes an array of {@link JsonNumber}s of length `length` (any length when omitted).
 *
 * @throws LetheError `E_FORMAT` naming `field` (not an array, wrong length, bad entry).
 */
export function decodeArray(value: unknown, field: string, length?: number): Float64Array {
  if (!Array.isArray(value)) throw new LetheError('E_FORMAT', 'not an array', field);
  if (length !== undefined && value.length !== length) {
    throw new LetheError('E_FORMAT', `length ${value.length}, expected ${length}`, field);
  }
  const out = new Float64Array(value.length);
  for (let i = 0; i < value.length; i++) out[i] = decodeNumber(value[i], `${field}[${i}]`);
  return out;
}

/**
 * Reads a non-negative safe integer.
 *
 * @throws LetheError `E_FORMAT` naming `field` otherwise.
 */
export function decodeCount(value: unknown, field: string, min = 0): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new LetheError('E_FORMAT', `not an integer ≥ ${min}: ${JSON.stringify(value)}`, field);
  }
  return value;
}

/**
 * Reads a plain object.
 *
 * @throws LetheError `E_FORMAT` naming `field` otherwise.
 */
export function decodeObject(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LetheError('E_FORMAT', 'not an object', field);
  }
  return value as Record<string, unknown>;
}

/**
 * The largest magnitude of a coordinate (x₀, a finite bound, the mean) and of σ that a run
 * accepts, 10³² (CyberAgentAILab `cmaes`' limit on the mean and σ): far beyond any sensible
 * scaling, and far below the float64 range (≈ 1.8·10³⁰⁸), so m + σ·y stays finite.
 */
export const MAGNITUDE_LIMIT = 1e32;

/** What {@link checkFinite} requires of a number besides being finite. */
export interface FiniteRange {
  /** Must be > 0. */
  readonly positive?: boolean;
  /** Must satisfy |x| ≤ this. */
  readonly magnitude?: number;
}

/**
 * Checks that `x` is finite and within `range`; returns it.
 *
 * @throws LetheError `E_FORMAT` naming `field` otherwise.
 */
function checkFinite(x: number, field: string, range: FiniteRange = {}): number {
  if (!Number.isFinite(x)) throw new LetheError('E_FORMAT', `must be finite, got ${x}`, field);
  if (range.positive === true && !(x > 0)) {
    throw new LetheError('E_FORMAT', `must be > 0, got ${x}`, field);
  }
  if (range.magnitude !== undefined && Math.abs(x) > range.magnitude) {
    throw new LetheError('E_FORMAT', `must lie within ±${range.magnitude}, got ${x}`, field);
  }
  return x;
}

/**
 * Decodes a finite {@link JsonNumber} within `range`.
 *
 * @throws LetheError `E_FORMAT` naming `field` otherwise.
 */
export function decodeFinite(value: unknown, field: string, range: FiniteRange = {}): number {
  return checkFinite(decodeNumber(value, field), field, range);
}

/**
 * Decodes an array of finite {@link JsonNumber}s within `range` (see {@link decodeArray}).
 *
 * @throws LetheError `E_FORMAT` naming `field`, or `field[i]` for a bad entry.
 */
export function decodeFiniteArray(
  value: unknown,
  field: string,
  length?: number,
  range: FiniteRange = {},
): Float64Array {
  const out = decodeArray(value, field, length);
  for (let i = 0; i < out.length; i++) checkFinite(out[i]!, `${field}[${i}]`, range);
  return out;
}
