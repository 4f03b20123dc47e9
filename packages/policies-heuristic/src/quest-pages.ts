import { assertInteger, assertLength } from '@lethe/core';

/** Channel-wise bounds of the keys in each page of one KV head's live entries. */
export interface PageKeyBounds {
  /** Number of pages, `ceil(live / pageSize)` (the last may be partial). */
  readonly pages: number;
  /** Channel-wise minimum of the page's keys, `[pages, headDim]`. */
  readonly min: Float32Array;
  /** Channel-wise maximum of the page's keys, `[pages, headDim]`. */
  readonly max: Float32Array;
}

/**
 * Quest's page metadata for one KV head: for each page of `pageSize` consecutive live entries,
 * the channel-wise minimum and maximum of its keys.
 *
 * @param keys The head's live keys, `[live, headDim]`.
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
    const page = Math.floor(i / pageSize);
    for (let c = 0; c < headDim; c++) {
      const value = keys[i * headDim + c];
      min[page * headDim + c] = Math.min(min[page * headDim + c], value);
      max[page * headDim + c] = Math.max(max[page * headDim + c], value);
    }
  }
  return { pages, min, max };
}

/**
 * Quest's criticality of each page for one query vector: `Σ_c max(q_c·max_c, q_c·min_c)`, an
 * upper bound of `q·k` over every key `k` of the page (each channel's product is maximised
 * independently).
 *
 * @param query One query head's vector, `[headDim]`.
 * @returns `[pages]`.
 */
export function pageUpperBounds(bounds: PageKeyBounds, query: Float32Array): Float32Array {
  const headDim = query.length;
  assertLength(bounds.min, bounds.pages * headDim, 'bounds.min');
  const scores = new Float32Array(bounds.pages);
  for (let p = 0; p < bounds.pages; p++) {
    let total = 0;
    for (let c = 0; c < headDim; c++) {
      const q = query[c];
      total += Math.max(q * bounds.max[p * headDim + c], q * bounds.min[p * headDim + c]);
    }
    scores[p] = total;
  }
  return scores;
}
