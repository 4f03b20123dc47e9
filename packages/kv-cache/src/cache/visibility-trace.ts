import { GrowableInt32Array } from './growable-int32';

/** `evictedAt` of an entry that is still live: visible to every later query. */
export const STILL_LIVE = 0x7fffffff;

/**
 * Visibility intervals of one layer. Token `j` (in append order) of KV head `h` is visible to
 * the query of token `i` exactly when `j <= i < evictedAt[h][j]`, where `evictedAt` is the layer
 * length at the moment the entry was evicted ({@link STILL_LIVE} while it is live). One integer
 * per token and head is the whole record: the replay mask of NGC §4.5 / App. A.3 follows from it.
 */
export class VisibilityTrace {
  private constructor(private readonly evictedAt: GrowableInt32Array[]) {}

  /** An empty trace for `kvHeads` heads. */
  static empty(kvHeads: number): VisibilityTrace {
    return new VisibilityTrace(Array.from({ length: kvHeads }, () => new GrowableInt32Array()));
  }

  /** A trace from per-head `evictedAt` arrays (copied). */
  static fromEvictedAt(perHead: readonly Int32Array[]): VisibilityTrace {
    return new VisibilityTrace(perHead.map((row) => GrowableInt32Array.from(row)));
  }

  /** Registers `count` newly appended tokens, live in every head. */
  extend(count: number): void {
    for (const row of this.evictedAt) row.pushRepeated(STILL_LIVE, count);
  }

  /** Records that token `streamIndex` of `head` was evicted when the layer had `length` tokens. */
  markEvicted(head: number, streamIndex: number, length: number): void {
    this.evictedAt[head].set(streamIndex, length);
  }

  /** `evictedAt` of every token of `head` (a view, valid until the next append). */
  evictedAtOf(head: number): Int32Array {
    return this.evictedAt[head].view();
  }

  /** Whether every head has the same visibility intervals. */
  headsAgree(): boolean {
    const first = this.evictedAt[0].view();
    for (let h = 1; h < this.evictedAt.length; h++) {
      const row = this.evictedAt[h].view();
      for (let j = 0; j < first.length; j++) if (row[j] !== first[j]) return false;
    }
    return true;
  }

  /** Dense `[T, T]` mask of `head` (row = query token, column = key token; 1 = visible). */
  mask(head: number): Uint8Array {
    const evictedAt = this.evictedAt[head].view();
    const length = evictedAt.length;
    const mask = new Uint8Array(length * length);
    for (let j = 0; j < length; j++) {
      const end = Math.min(evictedAt[j], length);
      for (let i = j; i < end; i++) mask[i * length + j] = 1;
    }
    return mask;
  }

  /** A deep copy. */
  clone(): VisibilityTrace {
    return new VisibilityTrace(this.evictedAt.map((row) => row.clone()));
  }
}
