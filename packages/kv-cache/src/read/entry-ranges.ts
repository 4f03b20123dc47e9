import { LetheError } from '@lethe/core';

/**
 * Sets of live entries of one KV head as *entry ranges*: an `Int32Array` of pairs
 * `[start₀, end₀, start₁, end₁, …]`, each the half-open index range `[start, end)` of live
 * entries, sorted and disjoint (`startᵢ ≤ endᵢ ≤ startᵢ₊₁`). The form `KVCacheStore.gather`
 * takes: what one query reads, copied range by range.
 */

/** Number of entries in a set of entry ranges. */
export function rangeLength(ranges: Int32Array): number {
  let count = 0;
  for (let i = 0; i < ranges.length; i += 2) count += ranges[i + 1] - ranges[i];
  return count;
}

/**
 * Checks entry ranges against a head of `live` entries.
 *
 * @throws LetheError `E_DTYPE` naming `argument` unless an `Int32Array`, `E_SHAPE` for an odd
 *   length, `E_ARG` for a range that is reversed, unsorted, overlapping or outside `[0, live]`.
 */
export function checkRanges(ranges: Int32Array, live: number, argument: string): void {
  if (!(ranges instanceof Int32Array)) {
    throw new LetheError('E_DTYPE', 'must be an Int32Array of [start, end) pairs', argument);
  }
  if (ranges.length % 2 !== 0) {
    throw new LetheError(
      'E_SHAPE',
      `must hold [start, end) pairs, got ${ranges.length} numbers`,
      argument,
    );
  }
  let previous = 0;
  for (let i = 0; i < ranges.length; i += 2) {
    const start = ranges[i];
    const end = ranges[i + 1];
    if (!(start >= previous && end >= start && end <= live)) {
      throw new LetheError(
        'E_ARG',
        `range ${i / 2} [${start}, ${end}) is not sorted, disjoint and inside [0, ${live})`,
        argument,
      );
    }
    previous = end;
  }
}

/**
 * The entry ranges of a set of pages of `pageSize` live entries (page `p` = entries
 * `[p·pageSize, min(live, (p+1)·pageSize))`), adjacent pages merged. Pages may come in any
 * order and repeat; they must lie in `[0, ceil(live / pageSize))` (not checked).
 */
export function pageRanges(pages: Int32Array, live: number, pageSize: number): Int32Array {
  const chosen = new Uint8Array(Math.ceil(live / pageSize));
  for (const page of pages) chosen[page] = 1;
  const out: number[] = [];
  for (let p = 0; p < chosen.length; p++) {
    if (chosen[p] === 0) continue;
    const start = p * pageSize;
    const end = Math.min(live, start + pageSize);
    if (out.length > 0 && out[out.length - 1] === start) out[out.length - 1] = end;
    else out.push(start, end);
  }
  return Int32Array.from(out);
}

/** The entries in both sets of entry ranges, as entry ranges. */
export function intersectRanges(a: Int32Array, b: Int32Array): Int32Array {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const start = Math.max(a[i], b[j]);
    const end = Math.min(a[i + 1], b[j + 1]);
    if (start < end) out.push(start, end);
    if (a[i + 1] < b[j + 1]) i += 2;
    else j += 2;
  }
  return Int32Array.from(out);
}
