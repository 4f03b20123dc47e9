import { ranksBefore } from '@lethe/kv-cache';

/** The anchors and the gate-selected share of a budgeted cache, as GSA's policy keeps them. */
export interface EvictionLayout {
  /** Entries at positions below it are always kept. */
  readonly sinks: number;
  /** The most recent entries always kept (the query's own included). */
  readonly window: number;
  /** Entries kept by gate beyond the anchors (≥ 1). */
  readonly selected: number;
}

/**
 * Per query row `t` of one KV head, the boundary of a budgeted cache that has evicted by
 * `scores` since the start: the position of the `selected`-th entry among the evictable entries
 * `[sinks, t − window]` in the order every Lethe selection uses (`ranksBefore`: higher score
 * first, ties to the older entry), i.e. the last entry still held, or −1 while they all fit
 * (nothing evicted yet). Since a token's gate never changes and the evictable set only grows, the
 * entries a GSA cache holds at row `t` are exactly the boundary and those ranking before it,
 * whatever the order of its eviction rounds — which lets training see the cache of every row at
 * once.
 *
 * `scores` holds the head's gate scores of the sequence's `length` real tokens (from `offset`);
 * O(length · log selected) with a min-heap of the best `selected` entries.
 */
export function evictionBoundaries(
  scores: Float32Array,
  length: number,
  layout: EvictionLayout,
  offset = 0,
): Int32Array {
  const { sinks, window, selected } = layout;
  const boundaries = new Int32Array(length).fill(-1);
  const heap = new WorstFirstHeap(selected, (a, b) => ranksBefore(scores, offset + a, offset + b));
  for (let t = 0; t < length; t++) {
    const entering = t - window;
    if (entering < sinks) continue;
    heap.offer(entering);
    if (entering - sinks + 1 > selected) boundaries[t] = heap.worst();
  }
  return boundaries;
}

/** The best `capacity` entries offered so far (by `before`), the worst of them on top. */
class WorstFirstHeap {
  private readonly items: Int32Array;
  private size = 0;

  constructor(
    capacity: number,
    private readonly before: (a: number, b: number) => boolean,
  ) {
    this.items = new Int32Array(capacity);
  }

  worst(): number {
    return this.items[0]!;
  }

  offer(item: number): void {
    if (this.size < this.items.length) {
      this.items[this.size] = item;
      this.siftUp(this.size++);
    } else if (this.before(item, this.items[0]!)) {
      this.items[0] = item;
      this.siftDown();
    }
  }

  /** Whether the item at heap slot `a` ranks after the one at slot `b`. */
  private below(a: number, b: number): boolean {
    return this.before(this.items[b]!, this.items[a]!);
  }

  private siftUp(index: number): void {
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.below(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(): void {
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      let least = i;
      if (left < this.size && this.below(left, least)) least = left;
      if (left + 1 < this.size && this.below(left + 1, least)) least = left + 1;
      if (least === i) return;
      this.swap(i, least);
      i = least;
    }
  }

  private swap(a: number, b: number): void {
    const item = this.items[a]!;
    this.items[a] = this.items[b]!;
    this.items[b] = item;
  }
}
