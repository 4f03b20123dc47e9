import { GrowableInt32Array } from './growable-int32';
import { HeadStore } from './head-store';
import { ViewScratch } from './layer-view';
import type { ResolvedCacheOptions } from './options';
import type { SlotLayout } from './page';
import { QueryWindow } from './query-window';
import { VisibilityTrace } from './visibility-trace';

/** Everything a cache holds for one layer. */
export class LayerState {
  /** Reusable buffers for `view()` (not part of the cache's value: never cloned or serialised). */
  readonly scratch = new ViewScratch();

  constructor(
    /** One live set per KV head. */
    readonly heads: HeadStore[],
    /** Position of every token ever appended, in append order. */
    readonly positionLog: GrowableInt32Array,
    /** Visibility intervals, when tracing. */
    readonly trace: VisibilityTrace | undefined,
    /** The last recorded queries, when a query window is kept. */
    readonly queries: QueryWindow | undefined,
    /** Position of the newest recorded query, -1 before the first. */
    public lastQueryPosition: number,
  ) {}

  /** An empty layer. */
  static empty(options: ResolvedCacheOptions, layout: SlotLayout): LayerState {
    const { kvHeads, headDim } = options.geometry;
    return new LayerState(
      Array.from({ length: kvHeads }, () => new HeadStore(layout)),
      new GrowableInt32Array(),
      options.trace ? VisibilityTrace.empty(kvHeads) : undefined,
      options.queryWindow > 0
        ? new QueryWindow(options.queryWindow, options.queryHeads, headDim)
        : undefined,
      -1,
    );
  }

  /** Tokens appended so far. */
  get length(): number {
    return this.positionLog.length;
  }

  /** Position of the newest appended token, -1 before the first. */
  get lastPosition(): number {
    const n = this.positionLog.length;
    return n === 0 ? -1 : this.positionLog.get(n - 1);
  }

  /**
   * Forgets every token appended from append index `length` on (`0 ≤ length ≤ this.length`,
   * checked by the caller; the caller also refuses a traced layer): their live entries in every
   * head, their positions in the log, and the recorded queries at their positions. The newest
   * recorded query position falls back to at most the new last position, so their queries can
   * be recorded again once they are appended again.
   */
  truncate(length: number): void {
    if (length >= this.length) return;
    const cut = this.positionLog.get(length);
    for (const store of this.heads) store.truncateFrom(cut);
    this.positionLog.truncate(length);
    this.queries?.dropFrom(cut);
    this.lastQueryPosition = Math.min(this.lastQueryPosition, this.lastPosition);
  }

  /**
   * Whether every head would still hold the last `window` tokens (the recent-window anchors)
   * after {@link LayerState.truncate}`(length)`: false when one of them was evicted while later
   * tokens were the window.
   */
  keepsWindowAfterTruncate(length: number, window: number): boolean {
    const needed = Math.min(window, length);
    if (length >= this.length || needed === 0) return true;
    const cut = this.positionLog.get(length);
    return this.heads.every((store) => {
      const kept = store.visibleTo(cut - 1);
      // creation stamps increase strictly, so `needed` kept entries stamped up to `length` are
      // the last `needed` tokens exactly when the first of them is stamped `length − needed + 1`
      return kept >= needed && store.createdAtOf(kept - needed) === length - needed + 1;
    });
  }

  /** A deep copy (with fresh scratch buffers). */
  clone(): LayerState {
    return new LayerState(
      this.heads.map((store) => store.clone()),
      this.positionLog.clone(),
      this.trace?.clone(),
      this.queries?.clone(),
      this.lastQueryPosition,
    );
  }
}
