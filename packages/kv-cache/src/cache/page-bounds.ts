import type { PageKeyBounds } from '../read/page-key-bounds';

/**
 * The page key bounds of one (layer, KV head), kept up to date by its {@link HeadStore}: for
 * page `p` of the live entries, the channel-wise min and max of its keys, packed `[pages,
 * headDim]` into two buffers (so a reader gets them as views, without a copy). The buffers grow
 * geometrically and shrink when the head holds less than a quarter of them.
 */
export class PageBounds {
  private min: Float32Array;
  private max: Float32Array;
  private count = 0;

  constructor(
    private readonly headDim: number,
    capacity = 0,
  ) {
    this.min = new Float32Array(capacity * headDim);
    this.max = new Float32Array(capacity * headDim);
  }

  /** Pages described. */
  get pages(): number {
    return this.count;
  }

  /** Opens a new last page whose only key is `keys[offset .. offset + headDim)`. */
  open(keys: Float32Array, offset: number): void {
    const { headDim } = this;
    if ((this.count + 1) * headDim > this.min.length) this.resize(Math.max(4, 2 * this.count));
    const row = this.count * headDim;
    const key = keys.subarray(offset, offset + headDim);
    this.min.set(key, row);
    this.max.set(key, row);
    this.count += 1;
  }

  /** Widens the last page's bounds to include the key `keys[offset .. offset + headDim)`. */
  widen(keys: Float32Array, offset: number): void {
    const { headDim, min, max } = this;
    const row = (this.count - 1) * headDim;
    for (let c = 0; c < headDim; c++) {
      const value = keys[offset + c];
      if (value < min[row + c]) min[row + c] = value;
      if (value > max[row + c]) max[row + c] = value;
    }
  }

  /**
   * Keeps the first `pages` pages and recomputes those from `from` on out of their keys
   * (`keysOf(p)` = the page's key storage, `entriesOf(p)` = its entries): after a compaction
   * that moved the entries of those pages.
   */
  rebuild(
    pages: number,
    from: number,
    keysOf: (page: number) => Float32Array,
    entriesOf: (page: number) => number,
  ): void {
    const { headDim } = this;
    this.count = pages;
    if (pages * 4 < this.min.length / headDim && this.min.length > 4 * headDim)
      this.resize(Math.max(4, 2 * pages));
    for (let p = from; p < pages; p++) {
      const keys = keysOf(p);
      const row = p * headDim;
      this.min.set(keys.subarray(0, headDim), row);
      this.max.set(keys.subarray(0, headDim), row);
      for (let s = 1; s < entriesOf(p); s++) {
        for (let c = 0; c < headDim; c++) {
          const value = keys[s * headDim + c];
          if (value < this.min[row + c]) this.min[row + c] = value;
          if (value > this.max[row + c]) this.max[row + c] = value;
        }
      }
    }
  }

  /** The bounds as views of the buffers: valid until the next change of the head. */
  view(): PageKeyBounds {
    const length = this.count * this.headDim;
    return {
      pages: this.count,
      min: this.min.subarray(0, length),
      max: this.max.subarray(0, length),
    };
  }

  /** A deep copy. */
  clone(): PageBounds {
    const copy = new PageBounds(this.headDim, this.count);
    copy.min.set(this.min.subarray(0, this.count * this.headDim));
    copy.max.set(this.max.subarray(0, this.count * this.headDim));
    copy.count = this.count;
    return copy;
  }

  private resize(capacity: number): void {
    const keep = this.count * this.headDim;
    const min = new Float32Array(capacity * this.headDim);
    const max = new Float32Array(capacity * this.headDim);
    min.set(this.min.subarray(0, keep));
    max.set(this.max.subarray(0, keep));
    this.min = min;
    this.max = max;
  }
}
