import { LetheError } from '@lethe/core';
import {
  type CacheStats,
  checkEntryVectors,
  checkObservationNeeds,
  type GatherTarget,
  type KeepDecision,
  KVCache,
  type KVCacheOptions,
  type KVCacheStore,
  type LayerObservation,
  type LayerView,
  NO_NEEDS,
  type ObservationNeeds,
  type PageKeyBounds,
  type PageRanking,
} from '@lethe/kv-cache';
import { attendShared, type SharedParts } from '../attend/batch-attention';
import type { DeviceRows } from '../attend/device-rows';
import { destroyGpuBuffer } from '../device/gpu-buffers';
import { readBack } from '../device/read-back';
import { accumulateAttention } from '../observe/accumulate-attention';
import { observeOnDevice } from '../observe/device-observation';
import type { LayerPass } from '../observe/layer-pass';
import { DeviceQueryWindow } from './device-query-window';
import { checkKernelGeometry } from './kernel-geometry';
import { LayerPages } from './layer-pages';
import type { PagePool } from './page-pool';
import { sharedPagePool } from './pool-registry';
import { survivorsOf } from './survivors';

/** Options of a {@link DeviceKVCache}: a `KVCache`'s, and where the keys and values are readable. */
export interface DeviceKVCacheOptions extends KVCacheOptions {
  /**
   * Keep a host copy of the keys and values too (default false): what a run needs that reads them
   * on the host synchronously — `view`, `gather`, `pageKeyBounds` (a Quest read selector, SOL's κ
   * reads), the synchronous `observe` of keys, values or window attention, attention of a batch
   * mixing device and host caches. Without it the host part holds the bookkeeping only (a
   * `KVCache` with `storeKeys` and `storeValues` false) and those reads are `E_STATE` naming
   * `hostKeys`; `observeAsync` serves every need but the page bounds from the device. It also
   * decides where a `queryWindow`'s queries live: on the host with the keys, else on the device
   * (a ring per layer), where a step's queries are recorded without a read-back
   * (`recordQueriesFromRows`).
   */
  readonly hostKeys?: boolean;
  /**
   * Keep Quest's page key bounds on the device (default false): each page's channel-wise minimum
   * and maximum key, recomputed for the pages an append, eviction or truncation changes
   * (`2·headDim` floats per page), so that reads ranked by them (`DeviceRowsRequest.ranking`:
   * Quest, SOL's κ) run on the device.
   */
  readonly pageBounds?: boolean;
}

/** The chunk's own tokens, read after the cache entries, causally (like `CacheAttention`'s). */
export interface DeviceChunk {
  /** `[T, kvHeads, headDim]` keys after RoPE of the query tokens. */
  readonly keys: Float32Array;
  /** `[T, kvHeads, headDim]` values. */
  readonly values: Float32Array;
  /** `[T, kvHeads]` additive logit bias (a gate hook's log-gates), or none. */
  readonly bias?: Float32Array;
}

/** What one attention over a layer of a {@link DeviceKVCache} reads. */
export interface DeviceAttentionRequest {
  /** `[T, queryHeads, headDim]` queries after RoPE. */
  readonly queries: Float32Array;
  /**
   * `[T]` positions of the query tokens: a query sees the cache entries at positions ≤ its own.
   */
  readonly queryPositions: Int32Array;
  /**
   * Per KV head, the live-entry ranges to read (`[start₀, end₀, …]`, sorted, disjoint; a read
   * selector's pages or SOL's κ), `undefined` for a head that reads all its live entries.
   */
  readonly ranges?: readonly (Int32Array | undefined)[];
  /** `[kvHeads, max(live)]` additive logit bias per live entry (`attentionBias`), or none. */
  readonly liveBias?: Float32Array;
  /** The query tokens' own keys and values, not yet appended, read causally after the cache. */
  readonly chunk?: DeviceChunk;
  /**
   * Reads ranked on the device by Quest's bound for the token's query (`PageRanking` of
   * `@lethe/kv-cache`: per KV head a `TopPagesRead`, or undefined for a head read as `ranges`
   * says): a decode token only, on a cache with `pageBounds`.
   */
  readonly ranking?: PageRanking;
  /**
   * Where each ranked head `h` writes the entries it read: word `offset + h` of `buffer` (a
   * storage buffer; every part of a launch names the same one); none: not written.
   */
  readonly readCounts?: { readonly buffer: GPUBuffer; readonly offset: number };
}

/** One sequence of a batched attention: its cache and what it reads. */
export interface DeviceAttentionPart {
  readonly cache: DeviceKVCache;
  readonly request: DeviceAttentionRequest;
}

/**
 * What one sequence of an attention over a step's {@link DeviceRows} reads: its query tokens are
 * rows `firstRow …` of the step (their queries, and their own keys and values read causally after
 * the cache, as a chunk).
 */
export interface DeviceRowsRequest {
  /** `[T]` positions of the query tokens. */
  readonly queryPositions: Int32Array;
  /** The step's row of the first query token. */
  readonly firstRow: number;
  /** As {@link DeviceAttentionRequest.ranges}. */
  readonly ranges?: readonly (Int32Array | undefined)[];
  /** As {@link DeviceAttentionRequest.liveBias}. */
  readonly liveBias?: Float32Array;
  /** `[T, kvHeads]` additive logit bias of the query tokens' own keys, or none. */
  readonly chunkBias?: Float32Array;
  /**
   * As {@link DeviceAttentionRequest.ranking}; each ranked head writes the entries it read into
   * the rows' read counts (`DeviceRows.readCountSlot`).
   */
  readonly ranking?: PageRanking;
}

/** One sequence of an attention over a step's device rows: its cache and what it reads. */
export interface DeviceRowsPart {
  readonly cache: DeviceKVCache;
  readonly request: DeviceRowsRequest;
}

/**
 * Frees the pages of a cache that was dropped without `dispose()` (a `generate()` result nobody
 * disposed): WebGPU releases the memory of unreachable buffers only eventually, this makes it so.
 */
const dropped = new FinalizationRegistry<readonly { dispose(): void }[]>((held) => {
  for (const part of held) part.dispose();
});

/**
 * A KV cache whose keys, values, positions and gates live on a WebGPU device, in pages with a page
 * table per KV head, and whose attention is a paged WGSL kernel that reads only the pages a head
 * holds (or the ranges a read selector chose). It implements the whole `KVCacheStore` contract.
 *
 * The attention policies observe is computed on the device: with `trackAttention`, each recorded
 * query's attention is folded into per-entry sums kept in the pages (and moved with them), and
 * {@link DeviceKVCache.observeAsync} computes the window's attention rows there and reads back
 * only what the policy asked for (`O(live)` per head and query), keys and values packed from the
 * pages. The bookkeeping is *mirrored*: a host {@link KVCache} with the same calls holds the
 * positions, ages, live sets, anchors, accounting and the query window's positions — and, with
 * `hostKeys`, a copy of the keys, values and window queries too, for the contract's synchronous
 * reads of them (`view`, `gather`, `pageKeyBounds`, `observe`); without it the window's queries
 * are kept in a ring on the device. Per appended token the device receives its key and value
 * rows (or copies them from a step's rows already there: `appendRows`, `recordQueriesFromRows`);
 * an eviction round compacts the device pages in one pass; attention reads only the device.
 *
 * @example
 * ```ts
 * const cache = new DeviceKVCache({ geometry: { layers: 1, kvHeads: 1, headDim: 4 }, queryHeads: 1 }, device);
 * cache.append(0, keys, values, Int32Array.of(0));
 * const out = await cache.attendToHost(0, { queries, queryPositions: Int32Array.of(0) });
 * cache.dispose();
 * ```
 */
export class DeviceKVCache implements KVCacheStore {
  /** Whether the host part keeps a copy of the keys and values (see {@link DeviceKVCacheOptions}). */
  readonly hostKeys: boolean;
  /** Whether the pages' key bounds are kept on the device (see {@link DeviceKVCacheOptions}). */
  readonly pageBounds: boolean;
  private readonly host: KVCache;
  private readonly tracking: boolean;
  private readonly layers: LayerPages[];
  /** The query window's queries, on the device (a window kept without `hostKeys`). */
  private readonly window: DeviceQueryWindow | undefined;
  private disposed = false;

  /**
   * @param options the host cache's options (`storeKeys` and `storeValues` must stay true: the
   *   device cache exists to attend), `hostKeys` and `pageBounds`.
   * @param device the WebGPU device (tfjs's, to share buffers with its tensors).
   * @throws `E_ARG` naming the option at fault (as `KVCache` does), `storeKeys`, `storeValues` or
   *   `hostKeys` or `pageBounds` (not a boolean); `E_SHAPE`
   *   naming `geometry.headDim` or `queryHeads` for a geometry the kernels do not support;
   *   `E_CAPACITY` when a first page pool does not fit the device's buffer limits.
   */
  constructor(
    options: DeviceKVCacheOptions,
    readonly device: GPUDevice,
  ) {
    for (const stored of ['storeValues', 'storeKeys'] as const) {
      if (options?.[stored] === false) {
        throw new LetheError('E_ARG', 'a device cache stores keys and values (it attends)', stored);
      }
    }
    const hostKeys = options?.hostKeys ?? false;
    if (typeof hostKeys !== 'boolean') {
      throw new LetheError('E_ARG', `must be a boolean, got ${hostKeys}`, 'hostKeys');
    }
    this.hostKeys = hostKeys;
    const pageBounds = options?.pageBounds ?? false;
    if (typeof pageBounds !== 'boolean') {
      throw new LetheError('E_ARG', `must be a boolean, got ${pageBounds}`, 'pageBounds');
    }
    this.pageBounds = pageBounds;
    const checked = new KVCache(options);
    this.tracking = checked.trackAttention;
    // the accumulated attention lives on the device: the mirror does not track it
    const mirror = hostKeys ? {} : { storeKeys: false, storeValues: false };
    this.host =
      this.tracking || !hostKeys
        ? new KVCache({ ...options, ...mirror, trackAttention: false })
        : checked;
    checkKernelGeometry(device, this.host.geometry, this.host.queryHeads);
    const made: LayerPages[] = [];
    try {
      for (let layer = 0; layer < this.host.geometry.layers; layer++) {
        const shape = {
          geometry: this.host.geometry,
          gated: this.host.storeGates,
          tracked: this.tracking,
          bounded: pageBounds,
          layer,
        };
        made.push(new LayerPages(sharedPagePool(device, shape)));
      }
    } catch (error) {
      for (const pages of made) pages.dispose();
      throw error;
    }
    this.layers = made;
    const { queryWindow, geometry, queryHeads } = this.host;
    try {
      this.window =
        queryWindow > 0 && !hostKeys
          ? new DeviceQueryWindow(
              device,
              geometry.layers,
              queryWindow,
              queryHeads,
              geometry.headDim,
              made[0]!.pool.health,
            )
          : undefined;
    } catch (error) {
      for (const pages of made) pages.dispose();
      throw error;
    }
    dropped.register(this, [...made, ...(this.window === undefined ? [] : [this.window])], this);
  }

  get geometry() {
    return this.host.geometry;
  }
  get queryHeads() {
    return this.host.queryHeads;
  }
  get anchors() {
    return this.host.anchors;
  }
  get storeValues() {
    return true;
  }
  get storeGates() {
    return this.host.storeGates;
  }
  get queryWindow() {
    return this.host.queryWindow;
  }
  get trackAttention() {
    return this.tracking;
  }

  length(layer: number): number {
    return this.host.length(layer);
  }

  liveCounts(layer: number): Int32Array {
    return this.host.liveCounts(layer);
  }

  append(
    layer: number,
    keys: Float32Array,
    values: Float32Array,
    positions: Int32Array,
    gates?: Float32Array,
  ): void {
    this.usable();
    const before = this.host.liveCounts(layer);
    if (!this.hostKeys && positions instanceof Int32Array) {
      // the mirror ignores them: refuse here what a KVCache refuses
      const { kvHeads, headDim } = this.geometry;
      checkEntryVectors(keys, positions.length * kvHeads * headDim, 'keys');
      checkEntryVectors(values, positions.length * kvHeads * headDim, 'values');
    }
    this.host.append(layer, keys, values, positions, gates);
    this.layers[layer]!.append(before, keys, values, positions, gates);
  }

  /**
   * {@link DeviceKVCache.append} of tokens whose keys and values are already on the device: rows
   * `firstRow …` of a step's `rows` for `layer` (after RoPE), copied into the pages by one scatter
   * pass — nothing uploaded but positions and gates. The rows' non-finite flags (`rows.flags`) are
   * the caller's to check first: the device cannot refuse what it never reads back.
   *
   * @throws `E_STATE` naming `hostKeys` for a cache that keeps a host copy of its keys (it needs
   *   them on the host: use `append`); `E_ARG` naming `rows` (another device or shape) or
   *   `firstRow` (tokens past the rows); what `append` throws for `positions` and `gates`.
   */
  appendRows(
    layer: number,
    rows: DeviceRows,
    firstRow: number,
    positions: Int32Array,
    gates?: Float32Array,
  ): void {
    DeviceKVCache.appendRowsBatch(layer, rows, [{ cache: this, firstRow, positions, gates }]);
  }

  /**
   * {@link DeviceKVCache.appendRows} for several caches (a batch's step) with one scatter pass per
   * page pool. Every part's rows and first row are checked before any cache changes; positions
   * and gates as `append` checks them, cache by cache.
   *
   * @throws what `appendRows` throws, naming `parts[i].<argument>` for a part's own arguments.
   */
  static appendRowsBatch(
    layer: number,
    rows: DeviceRows,
    parts: readonly {
      readonly cache: DeviceKVCache;
      readonly firstRow: number;
      readonly positions: Int32Array;
      readonly gates?: Float32Array;
    }[],
  ): void {
    const label = (argument: string, i: number) =>
      parts.length === 1 ? argument : `parts[${i}].${argument}`;
    for (const [i, { cache, firstRow, positions }] of parts.entries()) {
      cache.checkRowsAppend(layer, rows, firstRow, positions, (argument) => label(argument, i));
    }
    const block = rows.inputsOf(layer);
    const moves = new Map<PagePool, Uint32Array[]>();
    for (const { cache, firstRow, positions, gates } of parts) {
      const { kvHeads, headDim } = cache.geometry;
      const before = cache.host.liveCounts(layer);
      const none = new Float32Array(0);
      cache.host.append(layer, none, none, positions, gates);
      const keysAt = block.offset + rows.tokens * cache.queryHeads * headDim;
      const pages = cache.layers[layer]!;
      const placed = pages.placeRows(
        before,
        (t, h) => keysAt + ((firstRow + t) * kvHeads + h) * headDim,
        positions,
        gates,
      );
      const lists = moves.get(pages.pool) ?? [];
      lists.push(placed);
      moves.set(pages.pool, lists);
    }
    const valueShift = rows.tokens * rows.shape.kvHeads * rows.shape.headDim;
    for (const [pool, lists] of moves) {
      const all = new Uint32Array(lists.reduce((sum, list) => sum + list.length, 0));
      let at = 0;
      for (const list of lists) {
        all.set(list, at);
        at += list.length;
      }
      pool.scatterRows(rows.buffer, all, valueShift);
    }
  }

  /**
   * Records the queries as `KVCache` does (the mirror checks them and keeps the window's
   * positions; without `hostKeys` the window's queries are uploaded to its ring on the device);
   * with `trackAttention`, their attention over the live entries is added to the entries' sums
   * on the device (the query-attention and accumulation passes; nothing is read back).
   */
  recordQueries(layer: number, queries: Float32Array, positions: Int32Array): void {
    this.usable();
    this.host.recordQueries(layer, queries, positions);
    this.window?.write(layer, queries);
    if (!this.tracking || positions.length === 0) return;
    const live = this.host.liveCounts(layer);
    accumulateAttention(this.pass(layer), {
      queries,
      positions,
      live,
      rowStride: Math.max(1, ...live),
    });
  }

  /**
   * {@link DeviceKVCache.recordQueries} of queries already on the device: rows `firstRow …` of a
   * step's `rows` for `layer` (after RoPE, tokens just appended at `positions`): the query
   * window's newest are copied from the rows into its ring on the device, and with
   * `trackAttention` their attention is added to the sums from the rows — nothing uploaded but
   * positions; the mirror records the positions. The rows' non-finite flags are the caller's to
   * check first.
   *
   * @throws `E_STATE` naming `hostKeys` for a cache that keeps its query window on the host with
   *   its keys (use `recordQueries`); `E_ARG` naming `rows` or `firstRow` as `appendRows` does;
   *   what `recordQueries` throws for `positions`.
   */
  recordQueriesFromRows(
    layer: number,
    rows: DeviceRows,
    firstRow: number,
    positions: Int32Array,
  ): void {
    this.usable();
    if (this.queryWindow > 0 && this.hostKeys) {
      throw new LetheError(
        'E_STATE',
        'the cache keeps its query window on the host with its keys: record the queries from the host',
        'hostKeys',
      );
    }
    rows.requireShapeOf(this);
    if (!(positions instanceof Int32Array)) {
      throw new LetheError('E_DTYPE', 'must be an Int32Array', 'positions');
    }
    rows.requireSpan(firstRow, positions.length, 'firstRow');
    const { headDim } = this.geometry;
    // the mirror checks the positions and records them (its window's queries are not read: the
    // device ring holds them)
    this.host.recordQueries(
      layer,
      new Float32Array(positions.length * this.queryHeads * headDim),
      positions,
    );
    if (positions.length === 0) return;
    const block = rows.inputsOf(layer);
    const queries = {
      buffer: block.buffer,
      offset: block.offset + firstRow * this.queryHeads * headDim,
    };
    this.window?.copy(layer, queries.buffer, queries.offset, positions.length);
    if (!this.tracking) return;
    const live = this.host.liveCounts(layer);
    accumulateAttention(this.pass(layer), {
      queries,
      positions,
      live,
      rowStride: Math.max(1, ...live),
    });
  }

  /** @throws `E_STATE` naming `hostKeys` without a host copy of the keys; as `KVCache.view`. */
  view(layer: number): LayerView {
    this.hostCopy('view', layer);
    return this.host.view(layer);
  }

  gather(
    layer: number,
    head: number,
    ranges: Int32Array,
    target: GatherTarget,
    offset: number,
  ): number {
    this.hostCopy('gather', layer);
    return this.host.gather(layer, head, ranges, target, offset);
  }

  /** @throws `E_STATE` naming `hostKeys` without a host copy of the keys; as `KVCache.pageKeyBounds`. */
  pageKeyBounds(layer: number, head: number): PageKeyBounds {
    this.hostCopy('pageKeyBounds', layer);
    return this.host.pageKeyBounds(layer, head);
  }

  /**
   * The observation from the mirror, synchronously: everything but the accumulated attention,
   * which lives on the device (read it with {@link DeviceKVCache.observeAsync}). The window's
   * attention is computed on the host here, in float64, as `KVCache` does.
   *
   * @throws `E_STATE` naming `observe` for `needs.accumulatedAttention` of a cache that tracks
   *   attention, and, without `hostKeys`, for keys, values or window attention (read them with
   *   `observeAsync`); `E_STATE` naming `needs.pageKeyBounds` for page bounds without `hostKeys`;
   *   otherwise what `KVCache.observe` throws.
   */
  observe(layer: number, needs: ObservationNeeds, hidden?: Float32Array): LayerObservation {
    if (this.tracking && needs?.accumulatedAttention === true) {
      throw new LetheError(
        'E_STATE',
        'the accumulated attention lives on the device: read it with observeAsync',
        'observe',
      );
    }
    if (!this.hostKeys && typeof needs === 'object' && needs !== null) {
      this.refusePageBounds(needs);
      if (needs.keys || needs.values || needs.attentionWindow > 0) {
        throw new LetheError(
          'E_STATE',
          'the keys and values live on the device (hostKeys = false): read them with observeAsync',
          'observe',
        );
      }
    }
    return this.host.observe(layer, needs, hidden);
  }

  /**
   * The observation a policy asks for (see `KVCacheStore.observe`), from the device where the
   * entries are: the newest `needs.attentionWindow` recorded queries' attention over the live
   * entries (the query-attention pass, float32), the accumulated attention and counts kept in
   * the pages, and the keys, values and gates packed from the pages (bits copied), read back
   * together; positions, ages, the queries, page bounds and `hidden` from the mirror.
   *
   * @throws what `observe` throws, `E_STATE` naming `needs.accumulatedAttention` when the cache
   *   does not track attention; `E_BACKEND` naming `device` once the device is lost.
   */
  async observeAsync(
    layer: number,
    needs: ObservationNeeds,
    hidden?: Float32Array,
  ): Promise<LayerObservation> {
    this.usable();
    checkObservationNeeds(needs, this, hidden);
    if (!this.hostKeys) this.refusePageBounds(needs);
    const base = this.host.observe(
      layer,
      { ...needs, attentionWindow: 0, accumulatedAttention: false, keys: false, values: false },
      hidden,
    );
    const recent =
      needs.attentionWindow > 0 ? this.host.recentQueries(layer, needs.attentionWindow) : undefined;
    const window =
      recent === undefined || this.window === undefined
        ? recent
        : {
            positions: recent.positions,
            queries: {
              buffer: this.window.buffer,
              runs: this.window.latest(layer, recent.positions.length),
            },
          };
    const observed = await observeOnDevice(this.pass(layer), {
      live: base.liveCounts,
      maxLive: base.maxLive,
      ...(window === undefined ? {} : { window }),
      accumulated: needs.accumulatedAttention,
      entries: { keys: needs.keys, values: needs.values, gates: this.storeGates },
    });
    await this.settled();
    return {
      ...base,
      ...(needs.keys ? { keys: observed.keys } : {}),
      ...(needs.values ? { values: observed.values } : {}),
      ...(this.storeGates ? { gates: observed.gates } : {}),
      ...(recent === undefined
        ? {}
        : {
            window: recent.positions.length,
            queries: observed.queries ?? recent.queries,
            attention: observed.attention,
          }),
      ...(needs.accumulatedAttention
        ? {
            accumulatedAttention: observed.accumulatedAttention,
            attentionCounts: observed.attentionCounts,
          }
        : {}),
    };
  }

  keep(layer: number, decision: KeepDecision): void {
    this.usable();
    const before = this.host.observe(layer, NO_NEEDS);
    this.host.keep(layer, decision);
    const after = this.host.observe(layer, NO_NEEDS);
    this.layers[layer]!.compact(survivorsOf(before, after));
  }

  truncate(length: number): void {
    this.usable();
    if (this.tracking) {
      throw new LetheError(
        'E_STATE',
        'the cache tracks attention: the accumulated sums include the forgotten queries',
        'truncate',
      );
    }
    this.host.truncate(length);
    this.layers.forEach((pages, l) => {
      pages.truncate(this.host.liveCounts(l));
      this.window?.shrink(l, this.host.recentQueries(l, this.queryWindow).positions.length);
    });
  }

  /**
   * Occupancy: entry counts, peaks and rounds exactly as `KVCache` counts them; the rest is the
   * device's: `pagesAllocated` the pages the heads hold, `bytesAllocated` this cache's share of
   * the shared pools (those pages and its rows of the page tables; the pools' free pages belong
   * to no cache: `liveGpuBuffers()` counts everything), `bytesLive` the live entries' keys,
   * values, positions, gates and attention sums. After `dispose()` the cache holds no page.
   */
  stats(): CacheStats {
    const stats = this.host.stats();
    return {
      ...stats,
      bytesAllocated: this.layers.reduce((sum, pages) => sum + pages.bytes, 0),
      bytesLive: stats.liveTotal * this.layers[0]!.bytesPerSlot,
      pagesAllocated: this.layers.reduce((sum, pages) => sum + pages.pagesHeld, 0),
    };
  }

  /**
   * The attention of `T` query tokens over one layer, on the device: per KV head, its group's
   * queries over the live entries it reads whose positions are ≤ the query's and, with `chunk`,
   * the chunk's tokens up to its own (softmax scale `1/√headDim`, plus `liveBias`, the log of
   * stored gates and the chunk's bias). Returns `[T, queryHeads,
   * headDim]` in a new buffer of the device (storage, copy source and destination: what `tf.tensor({ buffer })` needs) the caller destroys with
   * `destroyGpuBuffer`; a query that sees no entry gets zeros.
   *
   * @throws `E_ARG` naming `layer` or `ranges[h]`; `E_SHAPE` / `E_DTYPE` naming `queries`,
   *   `queryPositions`, `ranges`, `liveBias` or the `chunk` field at fault;
   *   `E_BACKEND` naming `device` once the device is lost; `E_CAPACITY` after an allocation ran
   *   out of device memory; `E_STATE` naming `dispose` after {@link DeviceKVCache.dispose}.
   */
  attend(layer: number, request: DeviceAttentionRequest): GPUBuffer {
    return DeviceKVCache.attendParts(
      layer,
      { parts: [{ cache: this, request }] },
      (argument) => argument,
    );
  }

  /**
   * The page pool this cache's `layer` lives in, as an opaque identity: caches with the same one
   * (every `DeviceKVCache` of one shape on one device) can attend together in
   * {@link DeviceKVCache.attendBatch}.
   */
  poolOf(layer: number): object {
    return DeviceKVCache.pagesOf(this, layer).pool;
  }

  /**
   * The attention of several sequences over one layer in one launch (a batch's decode step): each
   * part's cache and request as {@link DeviceKVCache.attend} takes them, the caches sharing their
   * page pool (every `DeviceKVCache` of one shape on one device does). Returns the parts' outputs
   * one after the other, `[ΣT, queryHeads, headDim]`, in a new buffer the caller destroys.
   *
   * @throws what `attend` throws, naming `parts[i].<argument>`; `E_ARG` naming `parts` when it is
   *   empty, mixes requests with and without a chunk, or holds caches that share no pool
   *   (different shapes or devices) or one cache twice.
   */
  static attendBatch(layer: number, parts: readonly DeviceAttentionPart[]): GPUBuffer {
    if (!Array.isArray(parts) || parts.length === 0) {
      throw new LetheError('E_ARG', 'must list at least one { cache, request }', 'parts');
    }
    return DeviceKVCache.attendParts(layer, { parts }, (argument, i) => `parts[${i}].${argument}`);
  }

  /**
   * {@link DeviceKVCache.attendBatch} for a step whose queries, keys and values are already on
   * the device, in `rows` (a model's step on tfjs's WebGPU backend: nothing is uploaded but the
   * plan): each part's query tokens are the rows from its `firstRow` on, their own keys and values
   * read causally after the cache — biased by their log-gates when the rows hold gates for the
   * layer (`DeviceRows.writeGates`).
   *
   * @throws what `attendBatch` throws; `E_ARG` naming `rows` when they are on another device or
   *   of another shape than the caches, `parts[i].firstRow` when the tokens pass the rows,
   *   `parts[i].chunkBias` beside the rows' gates.
   */
  static attendRows(layer: number, parts: readonly DeviceRowsPart[], rows: DeviceRows): GPUBuffer {
    if (!Array.isArray(parts) || parts.length === 0) {
      throw new LetheError('E_ARG', 'must list at least one { cache, request }', 'parts');
    }
    return DeviceKVCache.attendParts(
      layer,
      { parts, rows },
      (argument, i) => `parts[${i}].${argument}`,
    );
  }

  /** {@link DeviceKVCache.attend}, read back to the host (for tests and host-side callers). */
  async attendToHost(layer: number, request: DeviceAttentionRequest): Promise<Float32Array> {
    const output = this.attend(layer, request);
    try {
      const bytes = await readBack(this.device, output, output.size);
      await this.settled();
      return new Float32Array(
        bytes,
        0,
        request.queryPositions.length * this.queryHeads * this.geometry.headDim,
      );
    } finally {
      destroyGpuBuffer(output);
    }
  }

  /** Waits for the device's reports on this cache's allocations; throws what went wrong. */
  async settled(): Promise<void> {
    for (const pages of this.layers) await pages.pool.health.settled();
  }

  /**
   * Destroys the device buffers; later mutations and attention throw `E_STATE`. A cache dropped
   * without it has its buffers destroyed when it is garbage-collected.
   */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    dropped.unregister(this);
    for (const pages of this.layers) pages.dispose();
    this.window?.dispose();
  }

  /**
   * Validates the parts of an attention over `layer`, lays out their plan and inputs, and runs the
   * paged attention over their shared pool.
   */
  private static attendParts(
    layer: number,
    launch: SharedParts,
    label: (argument: string, part: number) => string,
  ): GPUBuffer {
    const shares = launch.parts.map(({ cache }, i) => {
      if (!(cache instanceof DeviceKVCache)) {
        throw new LetheError('E_ARG', 'must be a DeviceKVCache', label('cache', i));
      }
      return DeviceKVCache.pagesOf(cache, layer);
    });
    return attendShared(layer, launch, shares, label);
  }

  /** This cache's share of `layer`'s pool (after checking the layer index and the cache). */
  private static pagesOf(cache: DeviceKVCache, layer: number): LayerPages {
    cache.usable();
    const pages = cache.layers[layer];
    // an index out of range: the mirror names it
    if (pages === undefined) cache.host.liveCounts(layer);
    return pages!;
  }

  /** What a pass over `layer`'s pool binds. */
  private pass(layer: number): LayerPass {
    const pages = this.layers[layer]!;
    return {
      device: this.device,
      geometry: this.geometry,
      queryHeads: this.queryHeads,
      pool: pages.buffers,
      tableStride: pages.tableStride,
      tableBase: pages.tableBase,
    };
  }

  /** Checks one cache's part of an append from device rows (see `appendRows`), changing nothing. */
  private checkRowsAppend(
    layer: number,
    rows: DeviceRows,
    firstRow: number,
    positions: Int32Array,
    label: (argument: string) => string,
  ): void {
    this.usable();
    this.host.liveCounts(layer); // an index out of range: the mirror names it
    if (this.hostKeys) {
      throw new LetheError(
        'E_STATE',
        'the cache keeps a host copy of its keys: append them from the host',
        label('hostKeys'),
      );
    }
    rows.requireShapeOf(this);
    if (!(positions instanceof Int32Array)) {
      throw new LetheError('E_DTYPE', 'must be an Int32Array', label('positions'));
    }
    rows.requireSpan(firstRow, positions.length, label('firstRow'));
  }

  /** Throws `E_STATE` naming `hostKeys` when the host part keeps no keys (`what` reads them). */
  private hostCopy(what: string, layer: number): void {
    this.host.liveCounts(layer); // an index out of range: the mirror names it first
    if (!this.hostKeys) {
      throw new LetheError(
        'E_STATE',
        `${what} reads keys on the host, and they live on the device only (create the cache with hostKeys: true)`,
        'hostKeys',
      );
    }
  }

  /** Page key bounds are kept on the host only, with the keys: refused without `hostKeys`. */
  private refusePageBounds(needs: ObservationNeeds): void {
    if (needs.pageKeyBounds === true) {
      throw new LetheError(
        'E_STATE',
        'page key bounds are kept with a host copy of the keys (create the cache with hostKeys: true)',
        'needs.pageKeyBounds',
      );
    }
  }

  private usable(): void {
    if (this.disposed) throw new LetheError('E_STATE', 'the cache was disposed', 'dispose');
    for (const pages of this.layers) pages.pool.health.check();
  }
}
