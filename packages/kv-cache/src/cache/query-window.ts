import { assertInteger, LetheError } from '@lethe/core';

/**
 * Most floats one layer's query window may hold: `queryWindow · queryHeads · headDim ≤ 2^24`
 * (64 MiB of float32 per layer).
 *
 * A cache allocates every layer's window in full when it is created (one `Float32Array` of
 * `queryWindow · queryHeads · headDim` floats per layer), whether or not that many queries ever
 * come, so the bound is on the allocation, not on use. Two limits meet here. What one typed
 * array can hold: 2^32 bytes (2^30 floats) on 64-bit Node (`buffer.constants.MAX_LENGTH`), about
 * 2^30 bytes (2^28 floats) on 32-bit engines — 2^24 is 16× under the smaller, so a window within
 * the bound never meets an engine's `Invalid typed array length`. And what a process should spend on recent queries,
 * layers × 64 MiB at most: the window feeds policies that read the attention of the last few
 * queries (SnapKV's 32–64, NGC's 5, NAMM's update interval of 64–512), and a 512-query window of
 * 32 query heads × 128 is 2^21 floats, 8× under the bound, while a typo such as 1e7 is refused
 * before it asks for gigabytes.
 */
export const MAX_QUERY_WINDOW_FLOATS = 2 ** 24;

/**
 * The longest query window a cache with `queryHeads · headDim` floats per query holds:
 * `⌊MAX_QUERY_WINDOW_FLOATS / (queryHeads · headDim)⌋` queries (0 when one query is already
 * more than {@link MAX_QUERY_WINDOW_FLOATS}).
 */
export function maxQueryWindow(queryHeads: number, headDim: number): number {
  return Math.floor(MAX_QUERY_WINDOW_FLOATS / (queryHeads * headDim));
}

/**
 * Checks that a query window of `queryWindow` queries fits a cache of `queryHeads` query heads
 * of width `headDim` ({@link maxQueryWindow}); a policy provider checks its window option with
 * it, naming the option, before any cache is made.
 *
 * @param argument What the error names (default `queryWindow`).
 * @returns `queryWindow`, for chaining.
 * @throws LetheError `E_ARG` naming `argument` unless `queryWindow` is a non-negative integer
 *   of at most `maxQueryWindow(queryHeads, headDim)`.
 */
export function checkQueryWindow(
  queryWindow: number,
  queryHeads: number,
  headDim: number,
  argument = 'queryWindow',
): number {
  assertInteger(queryWindow, argument, 0);
  const most = maxQueryWindow(queryHeads, headDim);
  if (queryWindow > most) {
    throw new LetheError(
      'E_ARG',
      `must be ≤ ${most}, got ${queryWindow}: a query window holds at most ${MAX_QUERY_WINDOW_FLOATS} floats per layer (queryWindow · queryHeads · headDim, ${queryHeads} · ${headDim} per query)`,
      argument,
    );
  }
  return queryWindow;
}

/**
 * The last `capacity` recorded queries of one layer (all query heads), in a ring buffer.
 * Policies that look at "the attention of the last w queries" (SnapKV, TOVA, NGC, NAMM) read it
 * through the observation. The cache checks `capacity` ({@link checkQueryWindow}) before it
 * makes one.
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
