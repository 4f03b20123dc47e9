import { LetheError } from '@lethe/core';

/**
 * Checks one sequence's page lists for a layer: one `Int32Array` per KV head, every page inside
 * `[0, ceil(live / pageSize))`, where page `p` of KV head `h` holds that head's live entries
 * `[p·pageSize, (p+1)·pageSize)` (the last page may be partial). Order and repeats are free.
 *
 * @param liveCounts live entries per KV head of the layer, `[kvHeads]`.
 * @param argument name reported in errors, e.g. `controls[0][1].readPages`.
 * @throws LetheError `E_SHAPE` (not one list per KV head), `E_DTYPE` (not Int32Arrays),
 *   `E_ARG` (a page out of range).
 */
export function checkReadPages(
  pages: readonly Int32Array[],
  liveCounts: Int32Array,
  pageSize: number,
  argument: string,
): void {
  if (!Array.isArray(pages) || pages.length !== liveCounts.length) {
    throw new LetheError(
      'E_SHAPE',
      `expected one page list per KV head (${liveCounts.length})`,
      argument,
    );
  }
  pages.forEach((list, h) => {
    if (!(list instanceof Int32Array))
      throw new LetheError('E_DTYPE', 'must be Int32Arrays', argument);
    const pageCount = Math.ceil(liveCounts[h]! / pageSize);
    for (const page of list) {
      if (page < 0 || page >= pageCount) {
        throw new LetheError(
          'E_ARG',
          `page ${page} of head ${h} is outside [0, ${pageCount})`,
          argument,
        );
      }
    }
  });
}
