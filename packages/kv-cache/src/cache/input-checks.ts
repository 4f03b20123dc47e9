import { assertInteger, assertLength, LetheError } from '@lethe/core';

/** Throws `E_ARG` naming `argument` unless `index` is an integer in `[0, count)`. */
export function checkIndex(index: number, count: number, argument: string): number {
  assertInteger(index, argument, 0);
  if (index >= count) throw new LetheError('E_ARG', `must be < ${count}, got ${index}`, argument);
  return index;
}

/** Throws `E_DTYPE` unless `array` is a `Float32Array`, then `E_SHAPE` unless it has `length` elements. */
export function checkFloat32(array: unknown, length: number, argument: string): Float32Array {
  if (!(array instanceof Float32Array))
    throw new LetheError('E_DTYPE', 'must be a Float32Array', argument);
  assertLength(array, length, argument);
  return array;
}

/** Throws `E_DTYPE` unless `array` is an `Int32Array`. */
export function checkInt32(array: unknown, argument: string): Int32Array {
  if (!(array instanceof Int32Array))
    throw new LetheError('E_DTYPE', 'must be an Int32Array', argument);
  return array;
}

/**
 * What `KVCache.append` checks of its keys and values: a `Float32Array` of `length` floats
 * (`E_DTYPE` / `E_SHAPE`), every one finite (`E_ARG`), each error naming `argument`. For another
 * store whose host part keeps no keys to refuse what `KVCache` refuses.
 */
export function checkEntryVectors(array: unknown, length: number, argument: string): Float32Array {
  const vectors = checkFloat32(array, length, argument);
  checkFinite(vectors, argument);
  return vectors;
}

/** Throws `E_ARG` naming `argument` at the first NaN or infinite element. */
export function checkFinite(values: Float32Array, argument: string): void {
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    // x - x is 0 for finite x and NaN for NaN and ±Infinity.
    if (x - x !== 0) throw new LetheError('E_ARG', `non-finite value ${x} at index ${i}`, argument);
  }
}

/**
 * Throws `E_ARG` naming `positions` unless they are ≥ 0, strictly increasing, and all greater
 * than `after` (the newest position already present).
 */
export function checkNewPositions(positions: Int32Array, after: number): void {
  let previous = after;
  for (let t = 0; t < positions.length; t++) {
    const position = positions[t];
    if (position < 0 || position <= previous) {
      throw new LetheError(
        'E_ARG',
        `must be ≥ 0, strictly increasing and > ${after} (the newest position present); element ${t} is ${position}`,
        'positions',
      );
    }
    previous = position;
  }
}
