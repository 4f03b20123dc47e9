/**
 * A snapshot of cache occupancy. Entry counts are exact (counted, not estimated), so NGC's
 * "peak KV cache reduction" (eq. 7) is `1 - peakTotal / peakTotalOfFullCache`.
 */
export interface CacheStats {
  /** Live entries per layer, summed over KV heads, `[layers]`. */
  readonly livePerLayer: Int32Array;
  /** Live entries per (layer, KV head), `[layers, kvHeads]`. */
  readonly livePerHead: Int32Array;
  /** Largest `livePerLayer[l]` ever observed, measured after every append (the pre-eviction peak). */
  readonly peakPerLayer: Int32Array;
  /** Live entries in the whole cache. */
  readonly liveTotal: number;
  /** Largest `liveTotal` ever observed, measured after every append. */
  readonly peakTotal: number;
  /**
   * Bytes of the pages held (keys, values, gates, positions, creation stamps, attention, and each
   * page's key bounds: `2 · headDim` floats).
   */
  readonly bytesAllocated: number;
  /** Bytes of the live slots (`liveTotal` × bytes per slot, page bounds not included); ≤ `bytesAllocated`. */
  readonly bytesLive: number;
  /** Pages held, over all layers and heads. */
  readonly pagesAllocated: number;
  /** Eviction rounds (`keep` / `keepBlocks` calls) per layer, `[layers]`. */
  readonly evictionRounds: Int32Array;
}

/** Running live counts, peaks and round counters of a cache. */
export class Accounting {
  /** Live entries per (layer, head), `[layers * kvHeads]`. */
  readonly livePerHead: Int32Array;
  /** See {@link CacheStats.peakPerLayer}. */
  readonly peakPerLayer: Int32Array;
  /** See {@link CacheStats.evictionRounds}. */
  readonly evictionRounds: Int32Array;
  private total = 0;
  private peak = 0;

  constructor(
    private readonly layers: number,
    private readonly kvHeads: number,
  ) {
    this.livePerHead = new Int32Array(layers * kvHeads);
    this.peakPerLayer = new Int32Array(layers);
    this.evictionRounds = new Int32Array(layers);
  }

  /** Live entries in the whole cache. */
  get liveTotal(): number {
    return this.total;
  }

  /** See {@link CacheStats.peakTotal}. */
  get peakTotal(): number {
    return this.peak;
  }

  /** Live entries of `layer`, summed over heads. */
  liveOfLayer(layer: number): number {
    let sum = 0;
    for (let h = 0; h < this.kvHeads; h++) sum += this.livePerHead[layer * this.kvHeads + h];
    return sum;
  }

  /** Sets the live count of (layer, head). */
  setLive(layer: number, head: number, live: number): void {
    const index = layer * this.kvHeads + head;
    this.total += live - this.livePerHead[index];
    this.livePerHead[index] = live;
  }

  /** Updates the peaks after an append to `layer`. */
  afterAppend(layer: number): void {
    this.peakPerLayer[layer] = Math.max(this.peakPerLayer[layer], this.liveOfLayer(layer));
    this.peak = Math.max(this.peak, this.total);
  }

  /** Counts one eviction round of `layer`. */
  countRound(layer: number): void {
    this.evictionRounds[layer]++;
  }

  /** Restores peaks and round counters (deserialisation). */
  restoreHistory(peakPerLayer: Int32Array, evictionRounds: Int32Array, peakTotal: number): void {
    this.peakPerLayer.set(peakPerLayer);
    this.evictionRounds.set(evictionRounds);
    this.peak = peakTotal;
  }

  /** A {@link CacheStats} snapshot (fresh arrays) given the pages held and the bytes of a page and a slot. */
  snapshot(pagesAllocated: number, pageBytes: number, slotBytes: number): CacheStats {
    const livePerLayer = new Int32Array(this.layers);
    for (let l = 0; l < this.layers; l++) livePerLayer[l] = this.liveOfLayer(l);
    return {
      livePerLayer,
      livePerHead: this.livePerHead.slice(),
      peakPerLayer: this.peakPerLayer.slice(),
      liveTotal: this.total,
      peakTotal: this.peak,
      bytesAllocated: pagesAllocated * pageBytes,
      bytesLive: this.total * slotBytes,
      pagesAllocated,
      evictionRounds: this.evictionRounds.slice(),
    };
  }

  /** A deep copy. */
  clone(): Accounting {
    const copy = new Accounting(this.layers, this.kvHeads);
    copy.livePerHead.set(this.livePerHead);
    copy.restoreHistory(this.peakPerLayer, this.evictionRounds, this.peak);
    copy.total = this.total;
    return copy;
  }
}
