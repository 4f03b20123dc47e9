import type { PageKeyBounds } from '../read/page-key-bounds';

/** Where the keys of a head's pages are: `keysOf(p)` its key storage, `entriesOf(p)` its entries. */
export interface PageKeys {
  readonly keysOf: (page: number) => Float32Array;
  readonly entriesOf: (page: number) => number;
}

/**
 * The page key bounds of one (layer, KV head), kept by its {@link HeadStore}: for page `p` of the
 * live entries, the channel-wise min and max of its keys, packed `[pages, headDim]` into two
 * buffers (so a reader gets them as views, without a copy). The bounds of a prefix of the pages
 * are exact at all times; an append widens the last page while that prefix reaches it, and a
 * compaction only shortens the prefix to the first page it moved — the pages after it are
 * recomputed from their keys when the bounds are next read ({@link view}), so a cache evicting
 * at every step pays nothing for bounds no reader asks for. The buffers grow geometrically and
 * shrink when the head holds less than a quarter of them.
 */
export class PageBounds {
  private min: Float32Array;
  private max: Float32Array;
  private count = 0;
  /** Pages `[0, exact)` have exact bounds. */
  private exact = 0;

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
    this.count += 1;
    if (this.exact < this.count - 1) return; // recomputed when read
    const row = (this.count - 1) * headDim;
    const key = keys.subarray(offset, offset + headDim);
    this.min.set(key, row);
    this.max.set(key, row);
    this.exact = this.count;
  }

  /** Widens the last page's bounds to include the key `keys[offset .. offset + headDim)`. */
  widen(keys: Float32Array, offset: number): void {
    if (this.exact < this.count) return; // the last page is recomputed when read
    const { headDim, min, max } = this;
    const row = (this.count - 1) * headDim;
    for (let c = 0; c < headDim; c++) {
      const value = keys[offset + c];
      if (value < min[row + c]) min[row + c] = value;
      if (value > max[row + c]) max[row + c] = value;
    }
  }

  /**
   * Keeps the first `pages` pages, those from `from` on to be recomputed when next read: after a
   * compaction that moved the entries of those pages.
   */
  invalidate(pages: number, from: number): void {
    const { headDim } = this;
    this.count = pages;
    this.exact = Math.min(this.exact, from, pages);
    if (pages * 4 < this.min.length / headDim && this.min.length > 4 * headDim)
      this.resize(Math.max(4, 2 * pages));
  }

  /** The bounds as views of the buffers (stale pages recomputed from `keys` first): valid until the next change of the head. */
  view(keys: PageKeys): PageKeyBounds {
    this.recompute(keys);
    const length = this.count * this.headDim;
    return {
      pages: this.count,
      min: this.min.subarray(0, length),
      max: this.max.subarray(0, length),
    };
  }

  private recompute({ keysOf, entriesOf }: PageKeys): void {
    const { headDim, min, max } = this;
    for (let p = this.exact; p < this.count; p++) {
      const keys = keysOf(p);
      const row = p * headDim;
      min.set(keys.subarray(0, headDim), row);
      max.set(keys.subarray(0, headDim), row);
      for (let s = 1; s < entriesOf(p); s++) {
        for (let c = 0; c < headDim; c++) {
          const value = keys[s * headDim + c];
          if (value < min[row + c]) min[row + c] = value;
          if (value > max[row + c]) max[row + c] = value;
        }
      }
    }
    this.exact = this.count;
  }

  /** A deep copy. */
  clone(): PageBounds {
    const copy = new PageBounds(this.headDim, this.count);
    copy.min.set(this.min.subarray(0, this.count * this.headDim));
    copy.max.set(this.max.subarray(0, this.count * this.headDim));
    copy.count = this.count;
    copy.exact = this.exact;
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
