import { assertInteger } from '@lethe/core';

/**
 * Quest's page metadata of one KV head: for each page of `pageSize` consecutive live entries
 * (page `p` = live entries `[p·pageSize, (p+1)·pageSize)`, the last one possibly partial), the
 * channel-wise minimum and maximum of its keys.
 */
export interface PageKeyBounds {
  /** Number of pages, `ceil(live / pageSize)`. */
  readonly pages: number;
  /** Channel-wise minimum of each page's keys, `[pages, headDim]`. */
  readonly min: Float32Array;
  /** Channel-wise maximum of each page's keys, `[pages, headDim]`. */
  readonly max: Float32Array;
}

/**
 * Computes the {@link PageKeyBounds} of one KV head from its live keys, for a runtime that keeps
 * no cache maintaining them (a `KVCache` keeps them up to date itself: `pageKeyBounds`).
 *
 * @param keys the head's live keys in live order, `[live, headDim]`.
 * @throws LetheError `E_ARG` naming `headDim` or `pageSize` unless a positive integer, or
 *   `keys.length / headDim` unless an integer.
 */
export function pageKeyBounds(
  keys: Float32Array,
  headDim: number,
  pageSize: number,
): PageKeyBounds {
  assertInteger(headDim, 'headDim', 1);
  assertInteger(pageSize, 'pageSize', 1);
  const live = keys.length / headDim;
  assertInteger(live, 'keys.length / headDim', 0);
  const pages = Math.ceil(live / pageSize);
  const min = new Float32Array(pages * headDim).fill(Number.POSITIVE_INFINITY);
  const max = new Float32Array(pages * headDim).fill(Number.NEGATIVE_INFINITY);
  for (let i = 0; i < live; i++) {
    const row = Math.floor(i / pageSize) * headDim;
    for (let c = 0; c < headDim; c++) {
      const value = keys[i * headDim + c];
      if (value < min[row + c]) min[row + c] = value;
      if (value > max[row + c]) max[row + c] = value;
    }
  }
  return { pages, min, max };
}
