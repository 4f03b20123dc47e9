import type { CacheGeometry } from '@lethe/kv-cache';
import { countDispatches } from '../device/counters';
import { DeviceHealth } from '../device/device-health';
import { createGpuBuffer, destroyGpuBuffer } from '../device/gpu-buffers';
import { Usage } from '../device/usage';
import { writeArray } from '../device/write-array';
import { moveEntriesSource } from '../kernels/move-entries-wgsl';
import { computePipeline } from '../kernels/pipelines';
import { workgroupGrid } from '../kernels/workgroup-grid';
import { refreshPageBounds } from './page-bounds';
import { scatterRows } from './scatter-rows';

const POOL_USAGE = Usage.STORAGE | Usage.COPY_SRC | Usage.COPY_DST;

/** Pages a pool starts with, per KV head of its first sequence. */
const INITIAL_PAGES_PER_HEAD = 4;

/** The device buffers of one layer's pool of pages. */
export interface PoolBuffers {
  /** `[capacity·pageSize, headDim]` keys after RoPE. */
  readonly keys: GPUBuffer;
  /** `[capacity·pageSize, headDim]` values. */
  readonly values: GPUBuffer;
  /** `[capacity·pageSize]` token positions (int32). */
  readonly positions: GPUBuffer;
  /** `[capacity·pageSize]` gates, when the caches store them. */
  readonly gates: GPUBuffer | undefined;
  /** `[capacity·pageSize]` attention each entry received, when the caches track it. */
  readonly attention: GPUBuffer | undefined;
  /** `[capacity·pageSize]` queries that saw each entry (float32), when the caches track attention. */
  readonly counts: GPUBuffer | undefined;
  /**
   * `[capacity, 2, headDim]` Quest page key bounds (each page's channel-wise minimum, then
   * maximum, of its live entries' keys), when the caches keep them.
   */
  readonly bounds: GPUBuffer | undefined;
  /**
   * `[sequences·kvHeads, capacity]` page table (uint32): row `s·kvHeads + h` lists the pages of KV
   * head `h` of the sequence in slot `s`, in live order.
   */
  readonly table: GPUBuffer;
}

/** The shape a pool's pages have: caches with equal shapes on one device share a pool per layer. */
export interface PoolShape {
  readonly geometry: CacheGeometry;
  readonly gated: boolean;
  readonly tracked: boolean;
  /** Whether each page's key bounds are kept (for ranked reads: Quest, SOL's κ). */
  readonly bounded: boolean;
  readonly layer: number;
}

/**
 * One layer's pool of device pages, shared by every cache of the same shape on a device (so that
 * a batch of sequences attends in one launch): each cache holds a *slot*, the page-table rows of
 * its KV heads; live entry `i` of head `h` of slot `s` sits in page `table[s·kvHeads + h][⌊i /
 * pageSize⌋]`, at `i mod pageSize`. Free pages are shared; the pool grows by doubling (a device
 * copy) when a head needs a page and none is free, its table grows with the slots, and it
 * shrinks to twice what is held when a closing slot leaves it at most a quarter held. The pool
 * frees its buffers when its last slot closes. Allocation failures and device loss are recorded
 * in {@link PagePool.health}: a pool whose growth failed is unusable for every cache on it.
 * A `bounded` pool keeps each page's key bounds current: every change of a page's entries
 * (append, compaction, truncation) is followed by a pass recomputing the bounds of the pages it
 * touched.
 */
export class PagePool {
  /** What went wrong with this pool's device or allocations. */
  readonly health: DeviceHealth;
  private capacity: number;
  private readonly free: number[] = [];
  /** Per table row, its pages in live order (undefined: the row's slot is closed). */
  private readonly rows: (number[] | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  private slots = 0;
  private pool: PoolBuffers;
  /** Pages the pool starts with, and never shrinks below. */
  private readonly initialCapacity: number;
  private closed = false;
  /** `[page, entries]` pairs whose bounds are stale until the next {@link PagePool.flushBounds}. */
  private staleBounds: number[] = [];

  /**
   * @param onEmpty called once when the last slot closes (the pool has freed its buffers).
   */
  constructor(
    private readonly device: GPUDevice,
    readonly shape: PoolShape,
    private readonly onEmpty: () => void,
  ) {
    this.health = new DeviceHealth(device);
    this.initialCapacity = shape.geometry.kvHeads * INITIAL_PAGES_PER_HEAD;
    this.capacity = this.initialCapacity;
    this.pool = this.allocate(this.capacity, 1);
    this.slots = 1;
    this.freeSlots.push(0);
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

  /** Device bytes of one entry: its key and value, position, gate and attention sums. */
  get bytesPerSlot(): number {
    const { headDim } = this.shape.geometry;
    return 4 * (2 * headDim + 1 + (this.shape.gated ? 1 : 0) + (this.shape.tracked ? 2 : 0));
  }

  /** Device bytes of one held page: its entries and, in a bounded pool, its key bounds. */
  get bytesPerPage(): number {
    const { pageSize, headDim } = this.shape.geometry;
    return pageSize * this.bytesPerSlot + (this.shape.bounded ? 8 * headDim : 0);
  }

  /** Opens a slot (its heads hold no page yet) and returns it. */
  openSlot(): number {
    const { kvHeads } = this.shape.geometry;
    if (this.freeSlots.length === 0) {
      const slots = 2 * this.slots;
      for (let s = slots - 1; s >= this.slots; s--) this.freeSlots.push(s);
      this.slots = slots;
      this.replaceTable();
    }
    const slot = this.freeSlots.pop()!;
    for (let h = 0; h < kvHeads; h++) this.rows[slot * kvHeads + h] = [];
    return slot;
  }

  /** Pages the heads of `slot` hold. */
  pagesHeld(slot: number): number {
    const { kvHeads } = this.shape.geometry;
    let pages = 0;
    for (let h = 0; h < kvHeads; h++) pages += this.rows[slot * kvHeads + h]!.length;
    return pages;
  }

  /**
   * Writes `T` new entries per head of `slot` after the `before[h]` live entries head `h` held:
   * keys and values `[T, kvHeads, headDim]`, positions `[T]`, gates `[T, kvHeads]` (already
   * validated by the host cache); a tracking pool's sums of the new entries start at 0.
   */
  append(
    slot: number,
    before: Int32Array,
    keys: Float32Array,
    values: Float32Array,
    positions: Int32Array,
    gates: Float32Array | undefined,
  ): void {
    const { kvHeads, headDim } = this.shape.geometry;
    const at = this.place(slot, before, positions.length);
    this.writeRuns(at, positions, gates, (h, t, run) => {
      const rowsK = new Float32Array(run * headDim);
      const rowsV = new Float32Array(run * headDim);
      for (let r = 0; r < run; r++) {
        const from = ((t + r) * kvHeads + h) * headDim;
        rowsK.set(keys.subarray(from, from + headDim), r * headDim);
        rowsV.set(values.subarray(from, from + headDim), r * headDim);
      }
      const first = at[t * kvHeads + h]!;
      writeArray(this.device, this.pool.keys, 4 * first * headDim, rowsK);
      writeArray(this.device, this.pool.values, 4 * first * headDim, rowsV);
    });
    this.flushBounds();
  }

  /**
   * {@link PagePool.append} with the keys and values already on the device: places the entries
   * (positions and gates written from the host) and returns the `[source vec4, pool slot]` moves
   * that copy their key rows — `headDim` floats from `keyOffset(t, h)` of a step's rows — into the
   * pages, for {@link PagePool.scatterRows} (several caches' moves in one pass).
   */
  placeRows(
    slot: number,
    before: Int32Array,
    keyOffset: (t: number, h: number) => number,
    positions: Int32Array,
    gates: Float32Array | undefined,
  ): Uint32Array {
    const { kvHeads } = this.shape.geometry;
    const tokens = positions.length;
    const at = this.place(slot, before, tokens);
    this.writeRuns(at, positions, gates, () => {});
    const moves = new Uint32Array(2 * tokens * kvHeads);
    for (let t = 0; t < tokens; t++) {
      for (let h = 0; h < kvHeads; h++) {
        const i = t * kvHeads + h;
        moves[2 * i] = keyOffset(t, h) / 4;
        moves[2 * i + 1] = at[i]!;
      }
    }
    return moves;
  }

  /**
   * Copies key rows of `rows` (and the value rows `valueShift` floats after them) into the pool
   * slots `moves` lists ({@link PagePool.placeRows}), in one pass.
   */
  scatterRows(rows: GPUBuffer, moves: Uint32Array, valueShift: number): void {
    const { headDim } = this.shape.geometry;
    scatterRows(this.device, this.pool, rows, moves, headDim / 4, valueShift / 4);
    this.flushBounds();
  }

  /**
   * Takes the pages `tokens` new entries per head of `slot` need after `before[h]` live entries
   * (growing the pool, writing the table's new entries) and returns each new entry's pool slot,
   * `[tokens, kvHeads]`.
   */
  private place(slot: number, before: Int32Array, tokens: number): Uint32Array {
    const { kvHeads, pageSize } = this.shape.geometry;
    let needed = 0;
    for (let h = 0; h < kvHeads; h++) {
      needed += Math.ceil((before[h]! + tokens) / pageSize) - this.rows[slot * kvHeads + h]!.length;
    }
    this.reserve(needed);
    const at = new Uint32Array(tokens * kvHeads);
    for (let h = 0; h < kvHeads; h++) {
      const row = slot * kvHeads + h;
      const pages = this.rows[row]!;
      const grown = pages.length;
      while (pages.length * pageSize < before[h]! + tokens) pages.push(this.free.pop()!);
      if (pages.length > grown) {
        const added = Uint32Array.from(pages.slice(grown));
        writeArray(this.device, this.pool.table, 4 * (row * this.capacity + grown), added);
      }
      for (let t = 0; t < tokens; t++) {
        const index = before[h]! + t;
        at[t * kvHeads + h] = pages[Math.floor(index / pageSize)]! * pageSize + (index % pageSize);
      }
      this.markBounds(pages, before[h]!, before[h]! + tokens);
    }
    return at;
  }

  /**
   * Writes the positions, gates and zeroed sums of new entries at their pool slots `at`
   * (`[T, kvHeads]`), one write per buffer for each run of a head's consecutive tokens that land
   * in one page, and calls `vectors(h, t, run)` for each run.
   */
  private writeRuns(
    at: Uint32Array,
    positions: Int32Array,
    gates: Float32Array | undefined,
    vectors: (h: number, t: number, run: number) => void,
  ): void {
    const { kvHeads } = this.shape.geometry;
    const tokens = positions.length;
    for (let h = 0; h < kvHeads; h++) {
      for (let t = 0; t < tokens; ) {
        let run = 1;
        while (t + run < tokens && at[(t + run) * kvHeads + h] === at[t * kvHeads + h]! + run)
          run++;
        const first = at[t * kvHeads + h]!;
        vectors(h, t, run);
        writeArray(this.device, this.pool.positions, 4 * first, positions.subarray(t, t + run));
        if (gates !== undefined && this.pool.gates !== undefined) {
          const rowsG = new Float32Array(run);
          for (let r = 0; r < run; r++) rowsG[r] = gates[(t + r) * kvHeads + h]!;
          writeArray(this.device, this.pool.gates, 4 * first, rowsG);
        }
        if (this.pool.attention !== undefined && this.pool.counts !== undefined) {
          const zeros = new Float32Array(run);
          writeArray(this.device, this.pool.attention, 4 * first, zeros);
          writeArray(this.device, this.pool.counts, 4 * first, zeros);
        }
        t += run;
      }
    }
  }
  /**
   * Compacts every head of `slot` to its survivors after an eviction round: `survivors[h]` lists,
   * in increasing order, the old live indices head `h` keeps. Pages before a head's first moved
   * entry stay where they are; the rest of the head's survivors are moved into fresh pages by
   * one device pass for the whole layer, and the head's old pages from there on are freed.
   */
  compact(slot: number, survivors: readonly Int32Array[]): void {
    const { headDim, pageSize, kvHeads } = this.shape.geometry;
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
      const row = slot * kvHeads + h;
      const old = this.rows[row]!;
      const pages = old.slice(0, stay);
      for (let p = 0; p < fresh; p++) pages.push(this.free.pop()!);
      for (let j = stay * pageSize; j < kept.length; j++) {
        const from = old[Math.floor(kept[j]! / pageSize)]! * pageSize + (kept[j]! % pageSize);
        const to = pages[Math.floor(j / pageSize)]! * pageSize + (j % pageSize);
        moves.push(from, to);
      }
      freed.push(...old.slice(stay));
      this.rows[row] = pages;
      this.markBounds(pages, stay * pageSize, kept.length);
      if (fresh > 0) {
        const written = Uint32Array.from(pages.slice(stay));
        writeArray(this.device, this.pool.table, 4 * (row * this.capacity + stay), written);
      }
    });
    if (moves.length > 0) this.move(Uint32Array.from(moves), headDim);
    this.flushBounds();
    // freed pages return after the moves are submitted: a later append reuses them in order
    this.free.push(...freed.reverse());
  }

  /** Frees each head's pages of `slot` past its `live[h]` entries (after a truncation). */
  truncate(slot: number, live: Int32Array): void {
    const { kvHeads, pageSize } = this.shape.geometry;
    for (let h = 0; h < kvHeads; h++) {
      const pages = this.rows[slot * kvHeads + h]!;
      this.free.push(...pages.splice(Math.ceil(live[h]! / pageSize)).reverse());
      // a last page left partial lost entries: its bounds shrink
      if (live[h]! % pageSize !== 0) this.markBounds(pages, live[h]! - 1, live[h]!);
    }
    this.flushBounds();
  }

  /**
   * In a bounded pool, marks stale the bounds of the pages of a head's `pages` that hold its live
   * entries `[from, live)` (each page with its live entry count).
   */
  private markBounds(pages: readonly number[], from: number, live: number): void {
    if (!this.shape.bounded) return;
    const { pageSize } = this.shape.geometry;
    for (let p = Math.floor(from / pageSize); p * pageSize < live; p++) {
      this.staleBounds.push(pages[p]!, Math.min(pageSize, live - p * pageSize));
    }
  }

  /** Recomputes the stale page bounds on the device (one pass, after what made them stale). */
  private flushBounds(): void {
    if (this.staleBounds.length === 0 || this.pool.bounds === undefined) return;
    const list = Uint32Array.from(this.staleBounds);
    this.staleBounds = [];
    const { headDim, pageSize } = this.shape.geometry;
    refreshPageBounds(this.device, this.pool.keys, this.pool.bounds, list, headDim / 4, pageSize);
  }

  /**
   * Closes `slot`: its pages return to the pool; the last slot closed frees the pool, and a pool
   * left at most a quarter held shrinks ({@link PagePool.shrink}).
   */
  closeSlot(slot: number): void {
    const { kvHeads } = this.shape.geometry;
    if (this.closed || this.rows[slot * kvHeads] === undefined) return;
    for (let h = 0; h < kvHeads; h++) {
      this.free.push(...this.rows[slot * kvHeads + h]!.reverse());
      this.rows[slot * kvHeads + h] = undefined;
    }
    this.freeSlots.push(slot);
    if (this.freeSlots.length === this.slots) {
      this.closed = true;
      this.destroyBuffers(this.pool);
      this.onEmpty();
      return;
    }
    const held = this.capacity - this.free.length;
    if (this.capacity > this.initialCapacity && 4 * held <= this.capacity) this.shrink(held);
  }

  /**
   * Moves the `held` pages the open slots hold into a pool of twice that many pages (at least the
   * initial capacity), one device copy per page and buffer, numbered in row order, and rewrites
   * the table: after a burst the memory goes back while the other caches run on.
   */
  private shrink(held: number): void {
    const capacity = Math.max(this.initialCapacity, 2 * held);
    const smaller = this.allocate(capacity, this.slots);
    const { pageSize, headDim } = this.shape.geometry;
    const encoder = this.device.createCommandEncoder({
      label: `layer ${this.shape.layer} pool shrink`,
    });
    const fields = [
      ['keys', headDim],
      ['values', headDim],
      ['positions', 1],
      ['gates', 1],
      ['attention', 1],
      ['counts', 1],
    ] as const;
    let next = 0;
    this.rows.forEach((pages, row) => {
      if (pages === undefined) return;
      this.rows[row] = pages.map((page) => {
        for (const [field, width] of fields) {
          const from = this.pool[field];
          const to = smaller[field];
          if (from === undefined || to === undefined) continue;
          const bytes = 4 * pageSize * width;
          encoder.copyBufferToBuffer(from, page * bytes, to, next * bytes, bytes);
        }
        if (this.pool.bounds !== undefined && smaller.bounds !== undefined) {
          const bytes = 8 * headDim;
          encoder.copyBufferToBuffer(
            this.pool.bounds,
            page * bytes,
            smaller.bounds,
            next * bytes,
            bytes,
          );
        }
        return next++;
      });
    });
    this.device.queue.submit([encoder.finish()]);
    this.destroyBuffers(this.pool);
    this.pool = smaller;
    this.capacity = capacity;
    this.free.length = 0;
    for (let page = capacity - 1; page >= held; page--) this.free.push(page);
    this.writeTable();
  }

  /** Makes sure `pages` pages are free, growing the pool if they are not. */
  private reserve(pages: number): void {
    if (pages <= this.free.length) return;
    const capacity = Math.max(2 * this.capacity, this.capacity + pages - this.free.length);
    const grown = this.allocate(capacity, this.slots);
    const { pageSize, headDim } = this.shape.geometry;
    const encoder = this.device.createCommandEncoder({
      label: `layer ${this.shape.layer} pool growth`,
    });
    const entries = this.capacity * pageSize;
    encoder.copyBufferToBuffer(this.pool.keys, 0, grown.keys, 0, 4 * entries * headDim);
    encoder.copyBufferToBuffer(this.pool.values, 0, grown.values, 0, 4 * entries * headDim);
    encoder.copyBufferToBuffer(this.pool.positions, 0, grown.positions, 0, 4 * entries);
    for (const field of ['gates', 'attention', 'counts'] as const) {
      const from = this.pool[field];
      const to = grown[field];
      if (from !== undefined && to !== undefined) {
        encoder.copyBufferToBuffer(from, 0, to, 0, 4 * entries);
      }
    }
    if (this.pool.bounds !== undefined && grown.bounds !== undefined) {
      encoder.copyBufferToBuffer(this.pool.bounds, 0, grown.bounds, 0, 8 * this.capacity * headDim);
    }
    this.device.queue.submit([encoder.finish()]);
    this.destroyBuffers(this.pool);
    for (let page = capacity - 1; page >= this.capacity; page--) this.free.unshift(page);
    this.capacity = capacity;
    this.pool = grown;
    this.writeTable();
  }

  /** A table for the current slots (the old one's rows written again into it). */
  private replaceTable(): void {
    const { kvHeads } = this.shape.geometry;
    const table = this.health.allocating(this.device, `layer ${this.shape.layer} page table`, () =>
      createGpuBuffer(
        this.device,
        4 * this.slots * kvHeads * this.capacity,
        POOL_USAGE,
        'page table',
      ),
    );
    destroyGpuBuffer(this.pool.table);
    this.pool = { ...this.pool, table };
    this.writeTable();
  }

  /** Writes every open row of the table (its row stride is the capacity). */
  private writeTable(): void {
    const table = new Uint32Array(this.slots * this.shape.geometry.kvHeads * this.capacity);
    this.rows.forEach((pages, row) => {
      if (pages !== undefined) table.set(pages, row * this.capacity);
    });
    writeArray(this.device, this.pool.table, 0, table);
  }

  private allocate(capacity: number, slots: number): PoolBuffers {
    const { kvHeads, headDim, pageSize } = this.shape.geometry;
    const entries = capacity * pageSize;
    const what = `layer ${this.shape.layer} pages`;
    const make = (bytes: number) => createGpuBuffer(this.device, bytes, POOL_USAGE, what);
    return this.health.allocating(this.device, what, () => ({
      keys: make(4 * entries * headDim),
      values: make(4 * entries * headDim),
      positions: make(4 * entries),
      gates: this.shape.gated ? make(4 * entries) : undefined,
      attention: this.shape.tracked ? make(4 * entries) : undefined,
      counts: this.shape.tracked ? make(4 * entries) : undefined,
      bounds: this.shape.bounded ? make(8 * capacity * headDim) : undefined,
      table: make(4 * slots * kvHeads * capacity),
    }));
  }

  private destroyBuffers(buffers: PoolBuffers): void {
    for (const buffer of Object.values(buffers)) if (buffer !== undefined) destroyGpuBuffer(buffer);
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
    const { gated, tracked } = this.shape;
    const pipeline = computePipeline(device, 'move entries', moveEntriesSource(gated, tracked));
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
    if (this.pool.attention !== undefined && this.pool.counts !== undefined) {
      entries.push({ binding: 6, resource: { buffer: this.pool.attention } });
      entries.push({ binding: 7, resource: { buffer: this.pool.counts } });
    }
    const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
    const encoder = device.createCommandEncoder({ label: `layer ${this.shape.layer} compaction` });
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
