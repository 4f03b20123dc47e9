import { LetheError } from '@lethe/core';
import {
  intersectRanges,
  type KVCacheStore,
  type LayerControls,
  type PageRanking,
  pageRanges,
  type ReadAnchors,
  type ReadSelector,
  rangeLength,
  type TopPagesRead,
  tokenKeepRanking,
  tokenKeepRead,
} from '@lethe/kv-cache';
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
  /**
   * Entries read per KV head, `[kvHeads]` (the token's own key not included); 0 for a head the
   * device ranks (`ranking`), whose count the device reports.
   */
  readonly counts: Int32Array;
  /** The reads the sequence's device cache ranks itself (see `ReadRequests.deviceRanks`). */
  readonly ranking?: PageRanking;
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
  /**
   * Per sequence, whether its cache ranks pages itself (a `DeviceKVCache` with page bounds and no
   * host keys, attending on the device): its read selector's `pageRanking` or its `tokenKeep`
   * κ < 1 read becomes the sequence's `ranking` instead of ranges (the query never reaches the
   * host). Its `selected` entry must then be undefined.
   */
  readonly deviceRanks?: readonly boolean[];
  /** The read selectors per sequence (their `pageRanking`, for sequences the device ranks). */
  readonly selectors?: readonly (ReadSelector | undefined)[];
}

/**
 * Decides what each sequence's new token reads of `layer`: per KV head, the intersection of
 * every restriction given — its `readPages` control, its read selector's pages, and its
 * `tokenKeep` κ < 1 read (the anchors plus the top pages by Quest's bound for the token's query,
 * see `tokenKeepRead` of `@lethe/kv-cache`, over the bounds the cache maintains) — or every live
 * entry when none restricts it. For a sequence whose device cache ranks pages itself
 * (`deviceRanks`), the selector's or κ's reads are described (`PageRanking`) for the device to
 * run instead. Runs before the caches are mutated.
 *
 * @throws LetheError `E_SHAPE` / `E_DTYPE` / `E_ARG` naming `controls[b][layer].readPages` or
 *   `readSelector.selectPages[b][layer]` for a bad page list; `E_STATE` naming `model` when a
 *   query `tokenKeep` ranks pages by is not finite; `E_ARG` naming `controls[b][layer].tokenKeep`
 *   when a device-ranked read meets another restriction of the same layer (a read selector's and
 *   κ's ranking, or `readPages` on a ranked head: only the host intersects them — create the
 *   cache with `hostKeys: true`).
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
    if (requests.deviceRanks?.[b] === true) {
      const read = deviceRankedRead(
        cache,
        layer,
        live,
        control,
        requests.selectors?.[b],
        anchors,
        b,
      );
      // a query on the host is checked as the host's own ranking checks it
      if (read.ranking !== undefined && queries !== undefined) {
        const size = queries.length / caches.length;
        checkQueryFinite(queries.subarray(b * size, (b + 1) * size), b, layer);
      }
      return read;
    }
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

/**
 * A device-ranked sequence's read of `layer`: its read selector's `pageRanking` or its κ < 1
 * read (`tokenKeepRanking`) per KV head, with its `readPages` ranges for heads neither ranks.
 */
function deviceRankedRead(
  cache: KVCacheStore,
  layer: number,
  live: Int32Array,
  control: LayerControls | undefined,
  selector: ReadSelector | undefined,
  anchors: ReadAnchors,
  b: number,
): SequenceRead {
  const { kvHeads, pageSize } = cache.geometry;
  const selected = selector?.pageRanking?.(layer, live);
  const keepRate = control?.tokenKeep;
  const kappa =
    keepRate === undefined || keepRate >= 1
      ? undefined
      : Array.from(live, (n) => tokenKeepRanking(n, keepRate, anchors, pageSize));
  const pages = control?.readPages;
  if (pages !== undefined) {
    checkReadPages(pages, live, pageSize, `controls[${b}][${layer}].readPages`);
  }
  const heads: readonly (TopPagesRead | undefined)[] =
    selected?.heads ?? kappa ?? new Array(kvHeads).fill(undefined);
  const ranges = heads.map((_, h) =>
    pages === undefined ? undefined : pageRanges(pages[h]!, live[h]!, pageSize),
  );
  const both = selected !== undefined && kappa?.some((read) => read !== undefined) === true;
  const clash = heads.some((read, h) => read !== undefined && ranges[h] !== undefined);
  if (both || clash) {
    throw new LetheError(
      'E_ARG',
      'ranks pages on the device, and another restriction (a read selector, readPages) limits the same read: create the cache with hostKeys: true to intersect them on the host',
      `controls[${b}][${layer}].tokenKeep`,
    );
  }
  const counts = Int32Array.from(ranges, (r, h) =>
    heads[h] !== undefined ? 0 : r === undefined ? live[h]! : rangeLength(r),
  );
  const ranked = heads.some((read) => read !== undefined);
  const ranking = { reduce: selected?.reduce ?? 'max', heads };
  return { live, ranges, counts, ...(ranked ? { ranking } : {}) };
}
