import type { LayerView } from '@lethe/kv-cache';
import { LetheError } from '@lethe/tensor';

/**
 * Checks one sequence's page lists for a layer: one `Int32Array` per KV head, every page inside
 * `[0, ceil(live / pageSize))`, where page `p` of KV head `h` holds that head's live entries
 * `[p·pageSize, (p+1)·pageSize)` (the last page may be partial). Order and repeats are free.
 *
 * @param argument name reported in errors, e.g. `controls[0][1].readPages`.
 * @throws LetheError `E_SHAPE` (not one list per KV head), `E_DTYPE` (not Int32Arrays),
 *   `E_ARG` (a page out of range).
 */
export function checkReadPages(
  pages: readonly Int32Array[],
  view: LayerView,
  pageSize: number,
  argument: string,
): void {
  if (!Array.isArray(pages) || pages.length !== view.kvHeads) {
    throw new LetheError(
      'E_SHAPE',
      `expected one page list per KV head (${view.kvHeads})`,
      argument,
    );
  }
  pages.forEach((list, h) => {
    if (!(list instanceof Int32Array))
      throw new LetheError('E_DTYPE', 'must be Int32Arrays', argument);
    const pageCount = Math.ceil(view.liveCounts[h]! / pageSize);
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

/**
 * Marks visible (bias 0) the live entries of one padded row that lie in a page listed by
 * *every* list of `lists` (the intersection; one list opens exactly its pages). The row must
 * start fully hidden. `lists` must be non-empty and checked with {@link checkReadPages}.
 *
 * @param visible logit-bias buffer, one slot per padded entry.
 * @param rowStart offset of the row's first entry in `visible`.
 * @param live live entries of the row.
 */
export function openPages(
  visible: Float32Array,
  rowStart: number,
  live: number,
  lists: readonly Int32Array[],
  pageSize: number,
): void {
  const open = (page: number) =>
    visible.fill(0, rowStart + page * pageSize, rowStart + Math.min(live, (page + 1) * pageSize));
  if (lists.length === 1) {
    for (const page of lists[0]!) open(page);
    return;
  }
  // passed[p] = how many of the lists so far contain page p (a repeat within a list counts once)
  const passed = new Uint8Array(Math.ceil(live / pageSize));
  lists.forEach((list, i) => {
    for (const page of list) if (passed[page] === i) passed[page] = i + 1;
  });
  passed.forEach((count, page) => {
    if (count === lists.length) open(page);
  });
}
