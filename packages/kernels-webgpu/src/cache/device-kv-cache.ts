import { LetheError } from '@lethe/core';
import {
  type CacheStats,
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
} from '@lethe/kv-cache';
import { attentionPlan } from '../attend/attention-plan';
import { runPagedAttention } from '../attend/paged-attention';
import { DeviceHealth } from '../device/device-health';
import { destroyGpuBuffer } from '../device/gpu-buffers';
import { readBack } from '../device/read-back';
import { checkKernelGeometry } from './kernel-geometry';
import { LayerPages } from './layer-pages';
import { survivorsOf } from './survivors';

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
}

/**
 * Frees the pages of a cache that was dropped without `dispose()` (a `generate()` result nobody
 * disposed): WebGPU releases the memory of unreachable buffers only eventually, this makes it so.
 */
const dropped = new FinalizationRegistry<readonly LayerPages[]>((layers) => {
  for (const pages of layers) pages.dispose();
});

/**
 * A KV cache whose keys, values, positions and gates live on a WebGPU device, in pages with a page
 * table per KV head, and whose attention is a paged WGSL kernel that reads only the pages a head
 * holds (or the ranges a read selector chose). It implements the whole `KVCacheStore` contract.
 *
 * This first version is *mirrored*: a host {@link KVCache} with the same calls holds the
 * bookkeeping (positions, ages, live sets, anchors, accounting, query window, accumulated
 * attention) and answers the contract's synchronous reads (`view`, `gather`, `observe`,
 * `pageKeyBounds`), so policies see exactly what they see on the host cache and nothing is read
 * back from the device. Per appended token the device receives its key and value rows; an
 * eviction round compacts the device pages in one pass; attention reads only the device.
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
  private readonly host: KVCache;
  private readonly layers: LayerPages[];
  private readonly health: DeviceHealth;
  private disposed = false;

  /**
   * @param options the host cache's options (`storeValues` must stay true: the device cache
   *   exists to attend).
   * @param device the WebGPU device (tfjs's, to share buffers with its tensors).
   * @throws `E_ARG` naming the option at fault (as `KVCache` does) or `storeValues`; `E_SHAPE`
   *   naming `geometry.headDim` or `queryHeads` for a geometry the kernels do not support;
   *   `E_CAPACITY` when a first page pool does not fit the device's buffer limits.
   */
  constructor(
    options: KVCacheOptions,
    readonly device: GPUDevice,
  ) {
    if (options?.storeValues === false) {
      throw new LetheError('E_ARG', 'a device cache stores values (it attends)', 'storeValues');
    }
    this.host = new KVCache(options);
    checkKernelGeometry(device, this.host.geometry, this.host.queryHeads);
    this.health = new DeviceHealth(device);
    const made: LayerPages[] = [];
    try {
      for (let l = 0; l < this.host.geometry.layers; l++) {
        made.push(new LayerPages(device, this.health, this.host.geometry, this.host.storeGates, l));
      }
    } catch (error) {
      for (const pages of made) pages.dispose();
      throw error;
    }
    this.layers = made;
    dropped.register(this, made, this);
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
    return this.host.storeValues;
  }
  get storeGates() {
    return this.host.storeGates;
  }
  get queryWindow() {
    return this.host.queryWindow;
  }
  get trackAttention() {
    return this.host.trackAttention;
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
    this.host.append(layer, keys, values, positions, gates);
    this.layers[layer]!.append(before, keys, values, positions, gates);
  }

  recordQueries(layer: number, queries: Float32Array, positions: Int32Array): void {
    this.host.recordQueries(layer, queries, positions);
  }

  view(layer: number): LayerView {
    return this.host.view(layer);
  }

  gather(
    layer: number,
    head: number,
    ranges: Int32Array,
    target: GatherTarget,
    offset: number,
  ): number {
    return this.host.gather(layer, head, ranges, target, offset);
  }

  pageKeyBounds(layer: number, head: number): PageKeyBounds {
    return this.host.pageKeyBounds(layer, head);
  }

  observe(layer: number, needs: ObservationNeeds, hidden?: Float32Array): LayerObservation {
    return this.host.observe(layer, needs, hidden);
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
    this.host.truncate(length);
    this.layers.forEach((pages, l) => pages.truncate(this.host.liveCounts(l)));
  }

  /**
   * Occupancy: entry counts, peaks and rounds exactly as `KVCache` counts them; the rest is the
   * device's: `pagesAllocated` the pages the heads hold, `bytesAllocated` the pools reserved
   * (free pages included) and their page tables, `bytesLive` the live entries' keys, values,
   * positions and gates.
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
    this.usable();
    const live = this.host.liveCounts(layer);
    const { queryPositions, queries, chunk } = request;
    const plan = attentionPlan({
      queryPositions,
      ranges: request.ranges,
      liveBias: request.liveBias,
      chunkBias: chunk?.bias,
      live,
    });
    const tokens = queryPositions.length;
    const { headDim, kvHeads } = this.geometry;
    const queryFloats = tokens * this.queryHeads * headDim;
    const chunkFloats = tokens * kvHeads * headDim;
    checkFloats(queries, queryFloats, 'queries');
    if (chunk !== undefined) {
      checkFloats(chunk.keys, chunkFloats, 'chunk.keys');
      checkFloats(chunk.values, chunkFloats, 'chunk.values');
      if (chunk.bias !== undefined) checkFloats(chunk.bias, tokens * kvHeads, 'chunk.bias');
    }
    let inputs = queries;
    if (chunk !== undefined) {
      inputs = new Float32Array(queryFloats + 2 * chunkFloats);
      inputs.set(queries);
      inputs.set(chunk.keys, queryFloats);
      inputs.set(chunk.values, queryFloats + chunkFloats);
    }
    const pages = this.layers[layer]!;
    return runPagedAttention({
      device: this.device,
      geometry: this.geometry,
      queryHeads: this.queryHeads,
      pool: pages.buffers,
      tableStride: pages.tableStride,
      plan,
      inputs,
      tokens,
      chunk: chunk !== undefined,
      chunkBias: chunk?.bias !== undefined,
    });
  }

  /** {@link DeviceKVCache.attend}, read back to the host (for tests and host-side callers). */
  async attendToHost(layer: number, request: DeviceAttentionRequest): Promise<Float32Array> {
    const output = this.attend(layer, request);
    try {
      const bytes = await readBack(this.device, output, output.size);
      await this.health.settled();
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
    await this.health.settled();
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
  }

  private usable(): void {
    if (this.disposed) throw new LetheError('E_STATE', 'the cache was disposed', 'dispose');
    this.health.check();
  }
}

/** Checks that `array` is a Float32Array of `length` floats. */
function checkFloats(array: unknown, length: number, argument: string): void {
  if (!(array instanceof Float32Array)) {
    throw new LetheError('E_DTYPE', 'must be a Float32Array', argument);
  }
  if (array.length !== length) {
    throw new LetheError('E_SHAPE', `must hold ${length} floats, got ${array.length}`, argument);
  }
}
