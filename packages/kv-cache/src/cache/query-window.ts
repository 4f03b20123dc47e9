/**
 * The last `capacity` recorded queries of one layer (all query heads), in a ring buffer.
 * Policies that look at "the attention of the last w queries" (SnapKV, TOVA, NGC, NAMM) read it
 * through the observation.
 */
export class QueryWindow {
  private readonly data: Float32Array;
  private readonly tokenPositions: Int32Array;
  private readonly stride: number;
  private start = 0;
  private count = 0;

  constructor(
    readonly capacity: number,
    private readonly queryHeads: number,
    private readonly headDim: number,
  ) {
    this.stride = queryHeads * headDim;
    this.data = new Float32Array(capacity * this.stride);
    this.tokenPositions = new Int32Array(capacity);
  }

  /** Number of queries held (≤ capacity). */
  get size(): number {
    return this.count;
  }

  /**
   * Records tokens of `queries` (`[T, queryHeads, headDim]`) with their `positions`; only the
   * last `capacity` are kept.
   */
  push(queries: Float32Array, positions: Int32Array): void {
    const tokens = positions.length;
    for (let t = Math.max(0, tokens - this.capacity); t < tokens; t++) {
      const slot = (this.start + this.count) % this.capacity;
      this.data.set(queries.subarray(t * this.stride, (t + 1) * this.stride), slot * this.stride);
      this.tokenPositions[slot] = positions[t];
      if (this.count < this.capacity) this.count++;
      else this.start = (this.start + 1) % this.capacity;
    }
  }

  /**
   * Forgets the recorded queries at positions ≥ `position` (the newest ones: positions increase
   * in the window). The older queries the ring buffer already overwrote do not come back, so the
   * window may then hold fewer than `capacity` queries although more were recorded before them.
   */
  dropFrom(position: number): void {
    while (
      this.count > 0 &&
      this.tokenPositions[(this.start + this.count - 1) % this.capacity] >= position
    ) {
      this.count--;
    }
  }

  /** Copies of the newest `n` (≤ size) queries `[n, queryHeads, headDim]` and positions, oldest first. */
  latest(n: number): { queries: Float32Array; positions: Int32Array } {
    const queries = new Float32Array(n * this.stride);
    const positions = new Int32Array(n);
    for (let k = 0; k < n; k++) {
      const slot = (this.start + this.count - n + k) % this.capacity;
      queries.set(
        this.data.subarray(slot * this.stride, (slot + 1) * this.stride),
        k * this.stride,
      );
      positions[k] = this.tokenPositions[slot];
    }
    return { queries, positions };
  }

  /** A deep copy. */
  clone(): QueryWindow {
    const copy = new QueryWindow(this.capacity, this.queryHeads, this.headDim);
    copy.data.set(this.data);
    copy.tokenPositions.set(this.tokenPositions);
    copy.start = this.start;
    copy.count = this.count;
    return copy;
  }
}
