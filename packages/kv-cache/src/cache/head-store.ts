import type { PageKeyBounds } from '../read/page-key-bounds';
import { copySlot, Page, type SlotLayout } from './page';
import { PageBounds } from './page-bounds';

/** A field of a page, or a packed copy of one, as a typed array. */
type FieldArray = Float32Array | Int32Array | Float64Array;

/** Every field of a head's live entries as dense arrays, entry-major (serialisation form). */
export interface HeadColumns {
  /** `[live, headDim]`. */
  readonly keys: Float32Array;
  /** `[live, headDim]` when values are stored. */
  readonly values: Float32Array | undefined;
  /** `[live]` when gates are stored. */
  readonly gates: Float32Array | undefined;
  /** `[live]`. */
  readonly positions: Int32Array;
  /** `[live]`. */
  readonly createdAt: Int32Array;
  /** `[live]` when attention is tracked. */
  readonly attention: Float64Array | undefined;
  /** `[live]` when attention is tracked. */
  readonly attentionCounts: Int32Array | undefined;
}

/** Where {@link HeadStore.gather} copies entries: `[entries, headDim]` vectors, `[entries]` gates. */
export interface GatherBuffers {
  readonly keys: Float32Array;
  readonly values: Float32Array | undefined;
  readonly gates: Float32Array | undefined;
}

/**
 * The ragged live set of one (layer, KV head): entries `0 .. live - 1` in increasing token
 * position, packed densely into pages (entry `i` sits in page `floor(i / pageSize)`, slot
 * `i % pageSize`). Eviction compacts the survivors to the front and drops the pages left
 * empty, so the pages held are always `ceil(live / pageSize)`. Each page's channel-wise key
 * bounds (Quest's metadata) are maintained alongside: widened on every push, recomputed for the
 * pages a compaction rewrote.
 */
export class HeadStore {
  private pages: Page[] = [];
  private count = 0;
  private bounds: PageBounds;

  constructor(private readonly layout: SlotLayout) {
    this.bounds = new PageBounds(layout.headDim);
  }

  /** Number of live entries. */
  get live(): number {
    return this.count;
  }

  /** Number of pages held. */
  get pageCount(): number {
    return this.pages.length;
  }

  /** Page `index` (entries `index * pageSize ..`); read-only use. */
  page(index: number): Page {
    return this.pages[index];
  }

  /**
   * Appends one entry. Key (and value) are read from `keys` / `values` at `vectorOffset`
   * (`headDim` floats each).
   */
  push(
    keys: Float32Array,
    values: Float32Array | undefined,
    vectorOffset: number,
    gate: number,
    position: number,
    createdAt: number,
  ): void {
    const { pageSize, headDim } = this.layout;
    const slot = this.count % pageSize;
    if (slot === 0) this.pages.push(new Page(this.layout));
    const page = this.pages[this.pages.length - 1];
    if (this.layout.storeKeys) {
      page.keys.set(keys.subarray(vectorOffset, vectorOffset + headDim), slot * headDim);
      if (slot === 0) this.bounds.open(keys, vectorOffset);
      else this.bounds.widen(keys, vectorOffset);
    }
    if (page.values)
      page.values.set(values!.subarray(vectorOffset, vectorOffset + headDim), slot * headDim);
    if (page.gates) page.gates[slot] = gate;
    page.positions[slot] = position;
    page.createdAt[slot] = createdAt;
    if (page.attention) {
      page.attention[slot] = 0;
      page.attentionCounts![slot] = 0;
    }
    this.count++;
  }

  /** The channel-wise key bounds of every page, `[pages, headDim]` views (valid until the next change). */
  pageKeyBounds(): PageKeyBounds {
    const { pageSize } = this.layout;
    return this.bounds.view({
      keysOf: (p) => this.pages[p]!.keys,
      entriesOf: (p) => Math.min(pageSize, this.count - p * pageSize),
    });
  }

  /**
   * Copies the keys (values, gates where `out` has them) of the entries in `ranges` (checked
   * entry ranges) into `out` from entry `offset` on, one `TypedArray.set` per page run.
   *
   * @returns the number of entries copied.
   */
  gather(ranges: Int32Array, out: GatherBuffers, offset: number): number {
    const { pageSize, headDim } = this.layout;
    let at = offset;
    for (let r = 0; r < ranges.length; r += 2) {
      const end = ranges[r + 1];
      for (let i = ranges[r]; i < end; ) {
        const page = this.pages[Math.floor(i / pageSize)];
        const slot = i % pageSize;
        const n = Math.min(end - i, pageSize - slot);
        if (n === pageSize) {
          // a whole page: its fields as they are, without a view to make
          out.keys.set(page.keys, at * headDim);
          out.values?.set(page.values!, at * headDim);
          out.gates?.set(page.gates!, at);
        } else {
          out.keys.set(page.keys.subarray(slot * headDim, (slot + n) * headDim), at * headDim);
          out.values?.set(
            page.values!.subarray(slot * headDim, (slot + n) * headDim),
            at * headDim,
          );
          out.gates?.set(page.gates!.subarray(slot, slot + n), at);
        }
        at += n;
        i += n;
      }
    }
    return at - offset;
  }

  /** Token position of live entry `index`. */
  positionAt(index: number): number {
    const { pageSize } = this.layout;
    return this.pages[Math.floor(index / pageSize)].positions[index % pageSize];
  }

  /** Creation stamp (layer length right after it was appended) of live entry `index`. */
  createdAtOf(index: number): number {
    const { pageSize } = this.layout;
    return this.pages[Math.floor(index / pageSize)].createdAt[index % pageSize];
  }

  /** Number of live entries whose position is ≤ `position` (they form a prefix). */
  visibleTo(position: number): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.positionAt(mid) <= position) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Whether `other` holds exactly the same token positions. */
  samePositionsAs(other: HeadStore): boolean {
    if (other.count !== this.count) return false;
    for (let p = 0; p < this.pages.length; p++) {
      const a = this.pages[p].positions;
      const b = other.pages[p].positions;
      const n = Math.min(this.layout.pageSize, this.count - p * this.layout.pageSize);
      for (let s = 0; s < n; s++) if (a[s] !== b[s]) return false;
    }
    return true;
  }

  /**
   * Copies one field of every live entry into `out` starting at `offset`, `width` elements
   * per entry, one `TypedArray.set` per page run.
   */
  copyField(
    select: (page: Page) => FieldArray,
    width: number,
    out: FieldArray,
    offset: number,
  ): void {
    const { pageSize } = this.layout;
    for (let p = 0; p < this.pages.length; p++) {
      const n = Math.min(pageSize, this.count - p * pageSize);
      const field = select(this.pages[p]);
      out.set(n === pageSize ? field : field.subarray(0, n * width), offset + p * pageSize * width);
    }
  }

  /** Writes `step - createdAt` of every live entry into `out` from `offset`. */
  copyAges(step: number, out: Int32Array, offset: number): void {
    const { pageSize } = this.layout;
    for (let i = 0; i < this.count; i++) {
      out[offset + i] = step - this.pages[Math.floor(i / pageSize)].createdAt[i % pageSize];
    }
  }

  /**
   * Adds `weights[i]` to the accumulated attention of entries `i < seen` and counts one more
   * query for each of them. Requires a layout that tracks attention.
   */
  accumulateAttention(weights: Float64Array, seen: number): void {
    const { pageSize } = this.layout;
    for (let p = 0; p * pageSize < seen; p++) {
      const page = this.pages[p];
      const n = Math.min(pageSize, seen - p * pageSize);
      const base = p * pageSize;
      for (let s = 0; s < n; s++) {
        page.attention![s] += weights[base + s];
        page.attentionCounts![s] += 1;
      }
    }
  }

  /**
   * Keeps the entries `i` with `keep[i] !== 0` (in order), compacts them to the front and
   * releases the pages left empty.
   */
  retain(keep: Uint8Array): void {
    const { pageSize, headDim } = this.layout;
    let kept = 0;
    let firstDropped = this.count;
    for (let i = 0; i < this.count; i++) {
      if (keep[i] === 0) {
        firstDropped = Math.min(firstDropped, i);
        continue;
      }
      if (i !== kept) {
        copySlot(
          this.pages[Math.floor(i / pageSize)],
          i % pageSize,
          this.pages[Math.floor(kept / pageSize)],
          kept % pageSize,
          headDim,
        );
      }
      kept++;
    }
    this.count = kept;
    this.pages.length = Math.ceil(kept / pageSize);
    this.bounds.invalidate(this.pages.length, Math.floor(firstDropped / pageSize));
  }

  /**
   * Drops the live entries whose token position is ≥ `position` (a suffix: positions increase),
   * releases the pages left empty and recomputes the bounds of the page cut through, if any.
   * Nothing before the cut moves, so the other pages' bounds stay exact.
   */
  truncateFrom(position: number): void {
    const { pageSize } = this.layout;
    const kept = this.visibleTo(position - 1);
    if (kept === this.count) return;
    this.count = kept;
    this.pages.length = Math.ceil(kept / pageSize);
    this.bounds.invalidate(this.pages.length, Math.floor(kept / pageSize));
  }

  /** Every field of the live entries as dense arrays. */
  toColumns(): HeadColumns {
    const { headDim } = this.layout;
    const n = this.count;
    const column = <A extends FieldArray>(
      make: (length: number) => A,
      select: (page: Page) => FieldArray,
      width: number,
    ): A => {
      const out = make(n * width);
      this.copyField(select, width, out, 0);
      return out;
    };
    const f32 = (length: number) => new Float32Array(length);
    const i32 = (length: number) => new Int32Array(length);
    return {
      keys: column(f32, (page) => page.keys, headDim),
      values: this.layout.storeValues ? column(f32, (page) => page.values!, headDim) : undefined,
      gates: this.layout.storeGates ? column(f32, (page) => page.gates!, 1) : undefined,
      positions: column(i32, (page) => page.positions, 1),
      createdAt: column(i32, (page) => page.createdAt, 1),
      attention: this.layout.trackAttention
        ? column(
            (length) => new Float64Array(length),
            (page) => page.attention!,
            1,
          )
        : undefined,
      attentionCounts: this.layout.trackAttention
        ? column(i32, (page) => page.attentionCounts!, 1)
        : undefined,
    };
  }

  /** Rebuilds a store from {@link HeadStore.toColumns} output (lengths already validated). */
  static fromColumns(layout: SlotLayout, columns: HeadColumns): HeadStore {
    const store = new HeadStore(layout);
    const { pageSize, headDim } = layout;
    for (let i = 0; i < columns.positions.length; i++) {
      store.push(
        columns.keys,
        columns.values,
        i * headDim,
        columns.gates ? columns.gates[i] : 0,
        columns.positions[i],
        columns.createdAt[i],
      );
      if (columns.attention) {
        const page = store.pages[Math.floor(i / pageSize)];
        page.attention![i % pageSize] = columns.attention[i];
        page.attentionCounts![i % pageSize] = columns.attentionCounts![i];
      }
    }
    return store;
  }

  /** A deep copy. */
  clone(): HeadStore {
    const copy = new HeadStore(this.layout);
    copy.pages = this.pages.map((page) => page.clone(this.layout));
    copy.count = this.count;
    copy.bounds = this.bounds.clone();
    return copy;
  }
}
