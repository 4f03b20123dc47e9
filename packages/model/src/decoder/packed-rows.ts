import type { KVCacheStore } from '@lethe/kv-cache';

/**
 * The tokens of a cached step's ragged chunks packed as rows, sequence after sequence, without
 * padding: sequence `b`'s token `t` is row `starts[b] + t`.
 */
export interface PackedRows {
  /** Sequences. */
  readonly batch: number;
  /** Rows: the tokens of all chunks. */
  readonly count: number;
  /** The longest chunk. */
  readonly width: number;
  /** `[B]` chunk lengths. */
  readonly lengths: Int32Array;
  /** `[B]` first row of each sequence. */
  readonly starts: Int32Array;
  /** `[B]` last row of each sequence. */
  readonly lastRows: Int32Array;
  /** `[N]` token ids. */
  readonly ids: Int32Array;
  /** `[N]` token positions (`cache.length(0) + t`). */
  readonly positions: Int32Array;
  /** `[N]` the sequence of each row. */
  readonly sequenceOfRow: Int32Array;
  /**
   * `[B · width]` the row of each slot of the right-padded `[B, width]` layout (a padding slot
   * takes its sequence's last row).
   */
  readonly paddedRows: Int32Array;
}

/** Packs the chunks (each at least one token) of a cached step; positions from the caches. */
export function packRows(
  caches: readonly KVCacheStore[],
  chunks: readonly Int32Array[],
): PackedRows {
  const batch = chunks.length;
  const lengths = Int32Array.from(chunks, (chunk) => chunk.length);
  const width = Math.max(...lengths);
  const starts = new Int32Array(batch);
  for (let b = 1; b < batch; b++) starts[b] = starts[b - 1]! + lengths[b - 1]!;
  const count = starts[batch - 1]! + lengths[batch - 1]!;
  const ids = new Int32Array(count);
  const positions = new Int32Array(count);
  const sequenceOfRow = new Int32Array(count);
  const paddedRows = new Int32Array(batch * width);
  chunks.forEach((chunk, b) => {
    const start = caches[b]!.length(0);
    ids.set(chunk, starts[b]!);
    for (let t = 0; t < chunk.length; t++) {
      positions[starts[b]! + t] = start + t;
      sequenceOfRow[starts[b]! + t] = b;
    }
    for (let t = 0; t < width; t++) {
      paddedRows[b * width + t] = starts[b]! + Math.min(t, chunk.length - 1);
    }
  });
  const lastRows = Int32Array.from(lengths, (length, b) => starts[b]! + length - 1);
  return {
    batch,
    count,
    width,
    lengths,
    starts,
    lastRows,
    ids,
    positions,
    sequenceOfRow,
    paddedRows,
  };
}
