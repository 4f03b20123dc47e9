import { LetheError } from '@lethe/core';
import { checkRanges } from '@lethe/kv-cache';

/** What one attention pass reads besides the cache: the queries' positions, reads and bias. */
export interface AttentionPlanInput {
  /** `[T]` positions of the query tokens. */
  readonly queryPositions: Int32Array;
  /** Per KV head, the live-entry ranges read (`[start₀, end₀, …]`), or all live entries. */
  readonly ranges: readonly (Int32Array | undefined)[] | undefined;
  /** `[kvHeads, biasStride]` additive logit bias per live entry, or none. */
  readonly liveBias: Float32Array | undefined;
  /** `[T, kvHeads]` additive logit bias of the chunk's tokens, or none. */
  readonly chunkBias: Float32Array | undefined;
  /** Live entries per KV head. */
  readonly live: Int32Array;
}

/** The plan buffer's words and where its parts start (see `pagedAttentionSource`). */
export interface AttentionPlan {
  readonly words: Uint32Array;
  readonly headRangesOffset: number;
  readonly rangesOffset: number;
  readonly biasOffset: number;
  readonly biasStride: number;
  readonly chunkBiasOffset: number;
  /** The most cache entries any head reads. */
  readonly maxRead: number;
}

/**
 * Lays out the plan of one attention pass: query positions, each head's ranges as
 * `[start, end, before]` triples, the live bias and the chunk bias as float bits.
 *
 * @throws `E_ARG` naming `ranges[h]` for a range that is reversed, unsorted, overlapping or past
 *   the head's live entries; `E_SHAPE` naming `ranges` (not one entry per KV head) or `liveBias`
 *   (not `kvHeads · max(live)` floats); `E_DTYPE` naming `liveBias` or `queryPositions`.
 */
export function attentionPlan(input: AttentionPlanInput): AttentionPlan {
  const { queryPositions, ranges, liveBias, chunkBias, live } = input;
  const kvHeads = live.length;
  if (!(queryPositions instanceof Int32Array)) {
    throw new LetheError('E_DTYPE', 'must be an Int32Array', 'queryPositions');
  }
  if (ranges !== undefined && ranges.length !== kvHeads) {
    throw new LetheError(
      'E_SHAPE',
      `must give one entry per KV head (${kvHeads}), got ${ranges.length}`,
      'ranges',
    );
  }
  const triples: number[] = [];
  const heads: number[] = [];
  let maxRead = 0;
  for (let h = 0; h < kvHeads; h++) {
    const read = ranges?.[h] ?? Int32Array.of(0, live[h]!);
    if (ranges?.[h] !== undefined) checkRanges(read, live[h]!, `ranges[${h}]`);
    heads.push(triples.length / 3, 0);
    let before = 0;
    for (let r = 0; r < read.length; r += 2) {
      if (read[r + 1]! === read[r]!) continue;
      triples.push(read[r]!, read[r + 1]!, before);
      before += read[r + 1]! - read[r]!;
      heads[2 * h + 1]!++;
    }
    maxRead = Math.max(maxRead, before);
  }
  const maxLive = Math.max(0, ...live);
  if (liveBias !== undefined) {
    if (!(liveBias instanceof Float32Array)) {
      throw new LetheError('E_DTYPE', 'must be a Float32Array', 'liveBias');
    }
    if (liveBias.length !== kvHeads * maxLive) {
      throw new LetheError(
        'E_SHAPE',
        `must hold kvHeads · max(live) = ${kvHeads * maxLive} floats, got ${liveBias.length}`,
        'liveBias',
      );
    }
  }
  const headRangesOffset = queryPositions.length;
  const rangesOffset = headRangesOffset + heads.length;
  const biasOffset = rangesOffset + triples.length;
  const chunkBiasOffset = biasOffset + (liveBias?.length ?? 0);
  const words = new Uint32Array(chunkBiasOffset + (chunkBias?.length ?? 0));
  words.set(
    new Uint32Array(queryPositions.buffer, queryPositions.byteOffset, queryPositions.length),
  );
  words.set(heads, headRangesOffset);
  words.set(triples, rangesOffset);
  if (liveBias !== undefined) {
    words.set(new Uint32Array(liveBias.buffer, liveBias.byteOffset, liveBias.length), biasOffset);
  }
  if (chunkBias !== undefined) {
    words.set(
      new Uint32Array(chunkBias.buffer, chunkBias.byteOffset, chunkBias.length),
      chunkBiasOffset,
    );
  }
  return {
    words,
    headRangesOffset,
    rangesOffset,
    biasOffset,
    biasStride: liveBias === undefined ? 0 : maxLive,
    chunkBiasOffset,
    maxRead,
  };
}
