import { assertInteger, LetheError } from '@lethe/core';
import type { Anchors, CacheGeometry } from '../geometry';
import { checkQueryWindow } from './query-window';

/** Slots per page when a geometry omits `pageSize`. */
export const DEFAULT_PAGE_SIZE = 16;

/** A geometry whose `pageSize` may be omitted (it defaults to {@link DEFAULT_PAGE_SIZE}). */
export interface CacheGeometryInput {
  /** Number of transformer layers. */
  readonly layers: number;
  /** Number of KV heads per layer. */
  readonly kvHeads: number;
  /** Width of one key (and one value) vector. */
  readonly headDim: number;
  /** Slots per storage page (default 16). */
  readonly pageSize?: number;
}

/** Options of a {@link KVCache}. Only `geometry` and `queryHeads` are required. */
export interface KVCacheOptions {
  /** Layers, KV heads, head width and page size (see {@link cacheGeometry} for the default page size). */
  readonly geometry: CacheGeometryInput;
  /** Number of query heads: a positive multiple of `geometry.kvHeads` (grouped-query attention). */
  readonly queryHeads: number;
  /** Entries that are never evicted. Default `{ sinks: 0, window: 0 }`. */
  readonly anchors?: Anchors;
  /**
   * Store key vectors (default true). Without them the cache keeps only the bookkeeping (positions,
   * ages, live sets, gates, the query window, accounting) — what a cache whose keys live elsewhere
   * (a device) mirrors; `append` ignores `keys`, and `view`, `gather`, `pageKeyBounds`,
   * `serialize` and observations of keys, window attention or page bounds are `E_STATE` naming
   * `storeKeys` or the need. Requires `trackAttention` false (the attention is computed from keys).
   */
  readonly storeKeys?: boolean;
  /** Store value vectors (default true). Without them `view().values` is absent. */
  readonly storeValues?: boolean;
  /** Store one gate per entry and KV head (default false); then `append()` requires `gates`. */
  readonly storeGates?: boolean;
  /**
   * How many of the most recent recorded queries to keep per layer (default 0): at most
   * `maxQueryWindow(queryHeads, geometry.headDim)`, since every layer allocates its window up
   * front (see `MAX_QUERY_WINDOW_FLOATS`).
   */
  readonly queryWindow?: number;
  /** Accumulate the attention every recorded query pays to each live entry (default false). */
  readonly trackAttention?: boolean;
  /** Record visibility intervals so that {@link KVCache.replayMask} works (default true). */
  readonly trace?: boolean;
}

/** {@link KVCacheOptions} with every default filled in and every field validated. */
export interface ResolvedCacheOptions {
  readonly geometry: CacheGeometry;
  readonly queryHeads: number;
  readonly anchors: Anchors;
  readonly storeKeys: boolean;
  readonly storeValues: boolean;
  readonly storeGates: boolean;
  readonly queryWindow: number;
  readonly trackAttention: boolean;
  readonly trace: boolean;
}

/**
 * Validates a geometry and fills `pageSize` (default {@link DEFAULT_PAGE_SIZE}). Every field must
 * be a positive integer; otherwise throws `E_ARG` naming the field (e.g. `geometry.headDim`).
 *
 * @example
 * ```ts
 * const geometry = cacheGeometry({ layers: 2, kvHeads: 2, headDim: 64 }); // pageSize 16
 * ```
 */
export function cacheGeometry(partial: CacheGeometryInput): CacheGeometry {
  if (typeof partial !== 'object' || partial === null) {
    throw new LetheError('E_ARG', 'must be an object', 'geometry');
  }
  const pageSize = partial.pageSize === undefined ? DEFAULT_PAGE_SIZE : partial.pageSize;
  return Object.freeze({
    layers: assertInteger(partial.layers, 'geometry.layers', 1),
    kvHeads: assertInteger(partial.kvHeads, 'geometry.kvHeads', 1),
    headDim: assertInteger(partial.headDim, 'geometry.headDim', 1),
    pageSize: assertInteger(pageSize, 'geometry.pageSize', 1),
  });
}

function booleanOption(value: boolean | undefined, fallback: boolean, argument: string): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    throw new LetheError('E_ARG', `must be a boolean, got ${value}`, argument);
  return value;
}

/**
 * Validates `options` and fills defaults. Throws `E_ARG` naming the first bad field (among them
 * `queryWindow` past `maxQueryWindow(queryHeads, geometry.headDim)`, before anything is
 * allocated).
 */
export function resolveCacheOptions(options: KVCacheOptions): ResolvedCacheOptions {
  if (typeof options !== 'object' || options === null) {
    throw new LetheError('E_ARG', 'must be an object', 'options');
  }
  const geometry = cacheGeometry(options.geometry);
  const queryHeads = assertInteger(options.queryHeads, 'queryHeads', 1);
  if (queryHeads % geometry.kvHeads !== 0) {
    throw new LetheError(
      'E_ARG',
      `must be a multiple of geometry.kvHeads (${geometry.kvHeads}), got ${queryHeads}`,
      'queryHeads',
    );
  }
  const anchors = options.anchors ?? { sinks: 0, window: 0 };
  const storeKeys = booleanOption(options.storeKeys, true, 'storeKeys');
  const trackAttention = booleanOption(options.trackAttention, false, 'trackAttention');
  if (trackAttention && !storeKeys) {
    throw new LetheError(
      'E_ARG',
      'needs the keys to compute attention: it cannot go with storeKeys = false',
      'trackAttention',
    );
  }
  return Object.freeze({
    geometry,
    queryHeads,
    anchors: Object.freeze({
      sinks: assertInteger(anchors.sinks, 'anchors.sinks', 0),
      window: assertInteger(anchors.window, 'anchors.window', 0),
    }),
    storeKeys,
    storeValues: booleanOption(options.storeValues, true, 'storeValues'),
    storeGates: booleanOption(options.storeGates, false, 'storeGates'),
    queryWindow: checkQueryWindow(options.queryWindow ?? 0, queryHeads, geometry.headDim),
    trackAttention,
    trace: booleanOption(options.trace, true, 'trace'),
  });
}
