import type { CacheGeometry } from '@lethe/kv-cache';
import { countDispatches } from '../device/counters';
import type { DeviceHealth } from '../device/device-health';
import { createGpuBuffer, destroyGpuBuffer } from '../device/gpu-buffers';
import { Usage } from '../device/usage';
import { writeArray } from '../device/write-array';
import { moveEntriesSource } from '../kernels/move-entries-wgsl';
import { computePipeline } from '../kernels/pipelines';
import { workgroupGrid } from '../kernels/workgroup-grid';

const POOL_USAGE = Usage.STORAGE | Usage.COPY_SRC | Usage.COPY_DST;

/** Pages a layer's pool starts with, per KV head. */
const INITIAL_PAGES_PER_HEAD = 4;

/** The device buffers of one layer's pool of pages. */
export interface PoolBuffers {
  /** `[capacity·pageSize, headDim]` keys after RoPE. */
  readonly keys: GPUBuffer;
  /** `[capacity·pageSize, headDim]` values. */
  readonly values: GPUBuffer;
  /** `[capacity·pageSize]` token positions (int32). */
  readonly positions: GPUBuffer;
  /** `[capacity·pageSize]` gates, when the cache stores them. */
  readonly gates: GPUBuffer | undefined;
  /** `[kvHeads, capacity]` page table (uint32): row `h` lists head `h`'s pages in live order. */
  readonly table: GPUBuffer;
}

/**
 * One layer of a device-resident paged cache: a pool of pages shared by the layer's KV heads,
 * each head's pages in live order (live entry `i` of a head sits in its page `⌊i / pageSize⌋`,
 * slot `i mod pageSize`), the free pages, and the page table on the device. The pool grows by
 * doubling (a device-side copy) when a head needs a page and none is free.
 */
export class LayerPages {
  private capacity: number;
  private readonly free: number[] = [];
  private readonly heads: number[][];
  private pool: PoolBuffers;

  constructor(
    private readonly device: GPUDevice,
    private readonly health: DeviceHealth,
    private readonly geometry: CacheGeometry,
    private readonly gated: boolean,
    private readonly layer: number,
  ) {
    this.capacity = geometry.kvHeads * INITIAL_PAGES_PER_HEAD;
    this.heads = Array.from({ length: geometry.kvHeads }, () => []);
    this.pool = this.allocate(this.capacity);
    for (let page = this.capacity - 1; page >= 0; page--) this.free.push(page);
  }

  /** The pool's buffers (replaced when the pool grows: read them for each use). */
  get buffers(): PoolBuffers {
    return this.pool;
  }

  /** Row stride of the page table: the pool's capacity in pages. */
  get tableStride(): number {
    return this.capacity;
  }

  /** Pages the heads hold. */
  get pagesHeld(): number {
    return this.heads.reduce((sum, pages) => sum + pages.length, 0);
  }

  /** Bytes of the pool and its page table on the device. */
  get bytes(): number {
    const { kvHeads, pageSize } = this.geometry;
    return this.capacity * pageSize * this.bytesPerSlot + 4 * kvHeads * this.capacity;
  }

  /** Device bytes of one entry: its key and value, position and gate. */
  get bytesPerSlot(): number {
    return 4 * (2 * this.geometry.headDim + 1 + (this.gated ? 1 : 0));
  }

  /**
   * Writes `T` new entries per head after the `before[h]` live entries head `h` held: keys and
   * values `[T, kvHeads, headDim]`, positions `[T]`, gates `[T, kvHeads]` (already validated by
   * the host cache).
   */
  append(
    before: Int32Array,
    keys: Float32Array,
    values: Float32Array,
    positions: Int32Array,
    gates: Float32Array | undefined,
  ): void {
    const { kvHeads, headDim, pageSize } = this.geometry;
    const tokens = positions.length;
    let needed = 0;
    for (let h = 0; h < kvHeads; h++) {
      needed += Math.ceil((before[h]! + tokens) / pageSize) - this.heads[h]!.length;
    }
    this.reserve(needed);
    for (let h = 0; h < kvHeads; h++) {
      const pages = this.heads[h]!;
      const grown = pages.length;
      while (pages.length * pageSize < before[h]! + tokens) pages.push(this.free.pop()!);
      if (pages.length > grown) {
        const added = Uint32Array.from(pages.slice(grown));
        writeArray(this.device, this.pool.table, 4 * (h * this.capacity + grown), added);
      }
      // runs of consecutive tokens that land in one page are one write per buffer
      for (let t = 0; t < tokens; ) {
        const index = before[h]! + t;
        const run = Math.min(tokens - t, pageSize - (index % pageSize));
        const slot = pages[Math.floor(index / pageSize)]! * pageSize + (index % pageSize);
        const rowsK = new Float32Array(run * headDim);
        const rowsV = new Float32Array(run * headDim);
        for (let r = 0; r < run; r++) {
          const from = ((t + r) * kvHeads + h) * headDim;
          rowsK.set(keys.subarray(from, from + headDim), r * headDim);
          rowsV.set(values.subarray(from, from + headDim), r * headDim);
        }
        writeArray(this.device, this.pool.keys, 4 * slot * headDim, rowsK);
        writeArray(this.device, this.pool.values, 4 * slot * headDim, rowsV);
        writeArray(this.device, this.pool.positions, 4 * slot, positions.subarray(t, t + run));
        if (gates !== undefined && this.pool.gates !== undefined) {
          const rowsG = new Float32Array(run);
          for (let r = 0; r < run; r++) rowsG[r] = gates[(t + r) * kvHeads + h]!;
          writeArray(this.device, this.pool.gates, 4 * slot, rowsG);
        }
        t += run;
      }
    }
  }

  /**
   * Compacts every head to its survivors after an eviction round: `survivors[h]` lists, in
   * increasing order, the old live indices head `h` keeps. Pages before a head's first moved
   * entry stay where they are; the rest of the head's survivors are moved into fresh pages by
   * one device pass for the whole layer, and the head's old pages from there on are freed.
   */
  compact(survivors: readonly Int32Array[]): void {
    const { headDim, pageSize } = this.geometry;
    const plans = survivors.map((kept) => {
      let unchanged = 0;
      while (unchanged < kept.length && kept[unchanged] === unchanged) unchanged++;
      const stay = Math.floor(unchanged / pageSize);
      return { kept, stay, fresh: Math.ceil(kept.length / pageSize) - stay };
    });
    this.reserve(plans.reduce((sum, plan) => sum + plan.fresh, 0));
    const moves: number[] = [];
    const freed: number[] = [];
    plans.forEach(({ kept, stay, fresh }, h) => {
      const old = this.heads[h]!;
      const pages = old.slice(0, stay);
      for (let p = 0; p < fresh; p++) pages.push(this.free.pop()!);
      for (let j = stay * pageSize; j < kept.length; j++) {
        const from = old[Math.floor(kept[j]! / pageSize)]! * pageSize + (kept[j]! % pageSize);
        const to = pages[Math.floor(j / pageSize)]! * pageSize + (j % pageSize);
        moves.push(from, to);
      }
      freed.push(...old.slice(stay));
      this.heads[h] = pages;
      if (fresh > 0) {
        const row = Uint32Array.from(pages.slice(stay));
        writeArray(this.device, this.pool.table, 4 * (h * this.capacity + stay), row);
      }
    });
    if (moves.length > 0) this.move(Uint32Array.from(moves), headDim);
    // freed pages return after the moves are submitted: a later append reuses them in order
    this.free.push(...freed.reverse());
  }

  /** Frees each head's pages past its `live[h]` entries (after a truncation). */
  truncate(live: Int32Array): void {
    this.heads.forEach((pages, h) => {
      const keep = Math.ceil(live[h]! / this.geometry.pageSize);
      this.free.push(...pages.splice(keep).reverse());
    });
  }

  /** Destroys the pool's buffers. */
  dispose(): void {
    for (const buffer of Object.values(this.pool))
      if (buffer !== undefined) destroyGpuBuffer(buffer);
  }

  /** Makes sure `pages` pages are free, growing the pool if they are not. */
  private reserve(pages: number): void {
    if (pages <= this.free.length) return;
    const capacity = Math.max(2 * this.capacity, this.capacity + pages - this.free.length);
    const grown = this.allocate(capacity);
    const { pageSize, headDim } = this.geometry;
    const encoder = this.device.createCommandEncoder({ label: `layer ${this.layer} pool growth` });
    const slots = this.capacity * pageSize;
    encoder.copyBufferToBuffer(this.pool.keys, 0, grown.keys, 0, 4 * slots * headDim);
    encoder.copyBufferToBuffer(this.pool.values, 0, grown.values, 0, 4 * slots * headDim);
    encoder.copyBufferToBuffer(this.pool.positions, 0, grown.positions, 0, 4 * slots);
    if (this.pool.gates !== undefined && grown.gates !== undefined) {
      encoder.copyBufferToBuffer(this.pool.gates, 0, grown.gates, 0, 4 * slots);
    }
    this.device.queue.submit([encoder.finish()]);
    this.dispose();
    for (let page = capacity - 1; page >= this.capacity; page--) this.free.unshift(page);
    this.capacity = capacity;
    this.pool = grown;
    // the table's row stride is the capacity: write every row again
    const table = new Uint32Array(this.geometry.kvHeads * capacity);
    this.heads.forEach((pages, h) => table.set(pages, h * capacity));
    writeArray(this.device, this.pool.table, 0, table);
  }

  private allocate(capacity: number): PoolBuffers {
    const { kvHeads, headDim, pageSize } = this.geometry;
    const slots = capacity * pageSize;
    const what = `layer ${this.layer} pages`;
    return this.health.allocating(this.device, what, () => ({
      keys: createGpuBuffer(this.device, 4 * slots * headDim, POOL_USAGE, what),
      values: createGpuBuffer(this.device, 4 * slots * headDim, POOL_USAGE, what),
      positions: createGpuBuffer(this.device, 4 * slots, POOL_USAGE, what),
      gates: this.gated ? createGpuBuffer(this.device, 4 * slots, POOL_USAGE, what) : undefined,
      table: createGpuBuffer(this.device, 4 * kvHeads * capacity, POOL_USAGE, what),
    }));
  }

  /** One device pass moving entries `[from, to]` (pairs of slots) within the pool. */
  private move(moves: Uint32Array, headDim: number): void {
    const device = this.device;
    const count = moves.length / 2;
    const list = createGpuBuffer(device, moves.byteLength, POOL_USAGE, 'entry moves');
    const params = createGpuBuffer(
      device,
      8,
      Usage.UNIFORM | Usage.COPY_DST,
      'entry move parameters',
    );
    writeArray(device, list, 0, moves);
    writeArray(device, params, 0, Uint32Array.of(count, headDim));
    const pipeline = computePipeline(device, 'move entries', moveEntriesSource(this.gated));
    const entries: GPUBindGroupEntry[] = [
      { binding: 0, resource: { buffer: params } },
      { binding: 1, resource: { buffer: list } },
      { binding: 2, resource: { buffer: this.pool.keys } },
      { binding: 3, resource: { buffer: this.pool.values } },
      { binding: 4, resource: { buffer: this.pool.positions } },
    ];
    if (this.pool.gates !== undefined) {
      entries.push({ binding: 5, resource: { buffer: this.pool.gates } });
    }
    const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
    const encoder = device.createCommandEncoder({ label: `layer ${this.layer} compaction` });
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    const [x, y] = workgroupGrid(device, Math.ceil((count * headDim) / 64));
    pass.dispatchWorkgroups(x, y);
    pass.end();
    device.queue.submit([encoder.finish()]);
    countDispatches(1);
    destroyGpuBuffer(list);
    destroyGpuBuffer(params);
  }
}
