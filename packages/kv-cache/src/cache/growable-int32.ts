/** An append-only list of 32-bit integers backed by an `Int32Array` that grows geometrically. */
export class GrowableInt32Array {
  private data: Int32Array;
  private size = 0;

  constructor(initialCapacity = 16) {
    this.data = new Int32Array(Math.max(1, initialCapacity));
  }

  /** Builds a list holding a copy of `values`. */
  static from(values: ArrayLike<number>): GrowableInt32Array {
    const list = new GrowableInt32Array(values.length);
    list.data.set(values);
    list.size = values.length;
    return list;
  }

  /** Number of elements. */
  get length(): number {
    return this.size;
  }

  /** Element `index` (unchecked: callers stay within `0 .. length - 1`). */
  get(index: number): number {
    return this.data[index];
  }

  /** Overwrites element `index` (unchecked). */
  set(index: number, value: number): void {
    this.data[index] = value;
  }

  /** Appends `count` copies of `value`. */
  pushRepeated(value: number, count: number): void {
    this.reserve(this.size + count);
    this.data.fill(value, this.size, this.size + count);
    this.size += count;
  }

  /** Appends every element of `values`. */
  pushAll(values: ArrayLike<number>): void {
    this.reserve(this.size + values.length);
    this.data.set(values, this.size);
    this.size += values.length;
  }

  /** Drops every element from `length` on (unchecked: `0 ≤ length ≤ this.length`); capacity is kept. */
  truncate(length: number): void {
    this.size = length;
  }

  /** A read-only window on the elements (valid until the next push). */
  view(): Int32Array {
    return this.data.subarray(0, this.size);
  }

  /** Deep copy. */
  clone(): GrowableInt32Array {
    return GrowableInt32Array.from(this.view());
  }

  private reserve(capacity: number): void {
    if (capacity <= this.data.length) return;
    const grown = new Int32Array(Math.max(capacity, this.data.length * 2));
    grown.set(this.data.subarray(0, this.size));
    this.data = grown;
  }
}
