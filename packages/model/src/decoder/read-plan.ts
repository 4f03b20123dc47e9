import {
  intersectRanges,
  type KVCacheStore,
  type LayerControls,
  pageRanges,
  type ReadAnchors,
  rangeLength,
  tokenKeepRead,
} from '@lethe/kv-cache';
import { LetheError } from '@lethe/tensor';
import { checkReadPages } from './read-pages';

/** What one sequence's new token reads of one layer's cache, per KV head. */
export interface SequenceRead {
  /** Live entries per KV head before the step, `[kvHeads]`. */
  readonly live: Int32Array;
  /**
   * Entry ranges read per KV head (sorted, disjoint `[start, end)` live-index pairs), or
   * undefined for every live entry (a dense read).
   */
  readonly ranges: readonly (Int32Array | undefined)[];
  /** Entries read per KV head, `[kvHeads]` (the token's own key not included). */
  readonly counts: Int32Array;
}

/** The restrictions that decide one layer's reads, per sequence. */
export interface ReadRequests {
  /** This layer's controls per sequence (`readPages`, `tokenKeep`); entries may be undefined. */
  readonly controls: readonly (LayerControls | undefined)[] | undefined;
  /** Pages per sequence from a read selector (undefined entries: no restriction). */
  readonly selected: readonly (readonly Int32Array[] | undefined)[] | undefined;
  /** The new tokens' queries after RoPE, `[B, queryHeads, headDim]`, when `tokenKeep` reads. */
  readonly queries: Float32Array | undefined;
  /** Entries a `tokenKeep` read never skips. */
  readonly anchors: ReadAnchors;
}

/**
 * Decides what each sequence's new token reads of `layer`: per KV head, the intersection of
 * every restriction given — its `readPages` control, its read selector's pages, and its
 * `tokenKeep` κ < 1 read (the anchors plus the top pages by Quest's bound for the token's query,
 * see `tokenKeepRead` of `@lethe/kv-cache`, over the bounds the cache maintains) — or every live
 * entry when none restricts it. Runs before the caches are mutated.
 *
 * @throws LetheError `E_SHAPE` / `E_DTYPE` / `E_ARG` naming `controls[b][layer].readPages` or
 *   `readSelector.selectPages[b][layer]` for a bad page list; `E_STATE` naming `model` when a
 *   query `tokenKeep` ranks pages by is not finite.
 */
export function planLayerReads(
  caches: readonly KVCacheStore[],
  layer: number,
  requests: ReadRequests,
): SequenceRead[] {
  const { controls, selected, queries, anchors } = requests;
  return caches.map((cache, b) => {
    const live = cache.liveCounts(layer);
    const { kvHeads, pageSize } = cache.geometry;
    const ranges: (Int32Array | undefined)[] = new Array(kvHeads).fill(undefined);
    const restrict = (h: number, read: Int32Array): void => {
      const current = ranges[h];
      ranges[h] = current === undefined ? read : intersectRanges(current, read);
    };
    const restrictToPages = (pages: readonly Int32Array[], argument: string): void => {
      checkReadPages(pages, live, pageSize, argument);
      for (let h = 0; h < kvHeads; h++) restrict(h, pageRanges(pages[h]!, live[h]!, pageSize));
    };
    const control = controls?.[b];
    if (control?.readPages !== undefined)
      restrictToPages(control.readPages, `controls[${b}][${layer}].readPages`);
    const pages = selected?.[b];
    if (pages !== undefined) restrictToPages(pages, `readSelector.selectPages[${b}][${layer}]`);
    const keepRate = control?.tokenKeep;
    if (keepRate !== undefined && keepRate < 1) {
      const group = cache.queryHeads / kvHeads;
      const size = queries!.length / caches.length;
      const own = queries!.subarray(b * size, (b + 1) * size);
      checkQueryFinite(own, b, layer);
      const groupSize = size / kvHeads;
      for (let h = 0; h < kvHeads; h++) {
        const groupQueries = own.subarray(h * groupSize, (h + 1) * groupSize);
        const bounds = cache.pageKeyBounds(layer, h);
        const read = tokenKeepRead(
          live[h]!,
          bounds,
          groupQueries,
          group,
          keepRate,
          anchors,
          pageSize,
        );
        if (read !== undefined) restrict(h, read.ranges);
      }
    }
    const counts = Int32Array.from(ranges, (r, h) => (r === undefined ? live[h]! : rangeLength(r)));
    return { live, ranges, counts };
  });
}

function checkQueryFinite(query: Float32Array, b: number, layer: number): void {
  for (let i = 0; i < query.length; i++) {
    if (!Number.isFinite(query[i]!)) {
      throw new LetheError(
        'E_STATE',
        `layer ${layer} produced a non-finite query (${query[i]}) for sequence ${b}: its weights or activations overflow; no cache was changed`,
        'model',
      );
    }
  }
}
