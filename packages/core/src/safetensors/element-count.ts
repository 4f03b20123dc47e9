/**
 * Number of elements of a row-major `shape` (1 for a scalar `[]`), or `undefined` when a
 * dimension is not a non-negative safe integer or the product exceeds
 * `Number.MAX_SAFE_INTEGER`.
 */
export function elementCount(shape: readonly unknown[]): number | undefined {
  let count = 1;
  for (const dim of shape) {
    if (typeof dim !== 'number' || !Number.isSafeInteger(dim) || dim < 0) return undefined;
    count *= dim;
    if (!Number.isSafeInteger(count)) return undefined;
  }
  return count;
}
