import type { PagePool, PoolBuffers } from './page-pool';

/**
 * One cache's share of a layer's {@link PagePool}: its slot (the page-table rows of its KV
 * heads) and what it holds there. Several caches of one shape share the pool, so that a batch of
 * them attends in one launch.
 */
export class LayerPages {
  /** The cache's slot in the pool: its heads' rows are `slot·kvHeads + h`. */
  readonly slot: number;
  private open = true;

  constructor(readonly pool: PagePool) {
    this.slot = pool.openSlot();
  }

  /** The pool's buffers (replaced when the pool grows: read them for each use). */
  get buffers(): PoolBuffers {
    return this.pool.buffers;
  }

  /** Row stride of the pool's page table. */
  get tableStride(): number {
    return this.pool.tableStride;
  }

  /** The table row of this cache's KV head 0 (head `h` is at `tableBase + h`). */
  get tableBase(): number {
    return this.slot * this.pool.shape.geometry.kvHeads;
  }

  /** Pages this cache's heads hold (none once disposed). */
  get pagesHeld(): number {
    return this.open ? this.pool.pagesHeld(this.slot) : 0;
  }

  /**
   * Device bytes of this cache's share: the pages it holds and its rows of the page table (none
   * once disposed).
   */
  get bytes(): number {
    if (!this.open) return 0;
    const { kvHeads } = this.pool.shape.geometry;
    return this.pagesHeld * this.pool.bytesPerPage + 4 * kvHeads * this.tableStride;
  }

  /** Device bytes of one entry (its page's key bounds aside). */
  get bytesPerSlot(): number {
    return this.pool.bytesPerSlot;
  }

  /** See {@link PagePool.append}. */
  append(
    before: Int32Array,
    keys: Float32Array,
    values: Float32Array,
    positions: Int32Array,
    gates: Float32Array | undefined,
  ): void {
    this.pool.append(this.slot, before, keys, values, positions, gates);
  }

  /** See {@link PagePool.placeRows}. */
  placeRows(
    before: Int32Array,
    keyOffset: (t: number, h: number) => number,
    positions: Int32Array,
    gates: Float32Array | undefined,
  ): Uint32Array {
    return this.pool.placeRows(this.slot, before, keyOffset, positions, gates);
  }

  /** See {@link PagePool.compact}. */
  compact(survivors: readonly Int32Array[]): void {
    this.pool.compact(this.slot, survivors);
  }

  /** See {@link PagePool.truncate}. */
  truncate(live: Int32Array): void {
    this.pool.truncate(this.slot, live);
  }

  /** Returns the slot's pages to the pool (once). */
  dispose(): void {
    if (!this.open) return;
    this.open = false;
    this.pool.closeSlot(this.slot);
  }
}
