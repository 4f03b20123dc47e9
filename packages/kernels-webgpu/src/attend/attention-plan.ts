import { LetheError } from '@lethe/core';
import {
  candidatePages,
  checkRanges,
  type PageRanking,
  type TopPagesRead,
  topPagesMaxRead,
} from '@lethe/kv-cache';
import { SEQUENCE_WORDS } from '../kernels/paged-attention-wgsl';
import { NO_COUNT, RANK_WORDS } from '../kernels/rank-pages-wgsl';

/** What one sequence of an attention pass reads besides its cache entries. */
export interface SequencePlanInput {
  /** The page-table row of the sequence's KV head 0 in the shared pool. */
  readonly tableBase: number;
  /** Live entries per page (what a ranked read's pages are). */
  readonly pageSize: number;
  /** `[T]` positions of the sequence's query tokens. */
  readonly queryPositions: Int32Array;
  /** Per KV head, the live-entry ranges read (`[start₀, end₀, …]`), or all live entries. */
  readonly ranges: readonly (Int32Array | undefined)[] | undefined;
  /** `[kvHeads, max(live)]` additive logit bias per live entry, or none. */
  readonly liveBias: Float32Array | undefined;
  /** `[T, kvHeads]` additive logit bias of the sequence's chunk tokens, or none. */
  readonly chunkBias: Float32Array | undefined;
  /** Live entries per KV head. */
  readonly live: Int32Array;
  /**
   * The row of the sequence's first token in the inputs the pass reads (its queries, its chunk's
   * keys and values); default: its first token's index in the plan (inputs uploaded for the pass).
   */
  readonly inputRow?: number;
  /**
   * Reads the device ranks (see `rankPagesSource`): per KV head a `TopPagesRead` or none, and how
   * a group's bounds combine; a decode token only (one query token), on a pool that keeps page
   * bounds. A head it ranks must have no `ranges`.
   */
  readonly ranking?: PageRanking;
  /** Where a ranked head `h` writes the entries it read (a word of the counts buffer), or none. */
  readonly countSlot?: (h: number) => number;
}

/** The plan buffer's words and where its parts start (see `pagedAttentionSource`). */
export interface AttentionPlan {
  readonly words: Uint32Array;
  /** Query tokens over all sequences. */
  readonly tokens: number;
  readonly sequenceOffset: number;
  readonly headRangesOffset: number;
  readonly rangesOffset: number;
  /** Where the `[tokens, kvHeads]` chunk bias starts; 0 when no sequence has one. */
  readonly chunkBiasOffset: number;
  /** The most cache entries any head of any sequence reads. */
  readonly maxRead: number;
  /** The most query tokens of one sequence. */
  readonly maxTokens: number;
  /**
   * The words to upload: everything but the ranked heads' triples at the end, which the ranking
   * pass writes (a fresh buffer holds zeros there).
   */
  readonly uploadWords: number;
  /** Where the ranked heads' `RANK_WORDS` words start; ranked heads. */
  readonly rankingsOffset: number;
  readonly rankings: number;
  /** The most candidate pages of a ranked head. */
  readonly maxCandidates: number;
}

/**
 * Lays out the plan of one attention pass over one or more sequences of a shared pool (their
 * query tokens one after the other): the query positions, each token's sequence, per sequence
 * its table base, first token, token count, live-bias placement and input row, per (sequence, KV head) its
 * ranges as `[start, end, before]` triples, the live biases and the chunk bias as float bits,
 * and the ranked heads' words (their triples reserved after the rest, their count left for the
 * ranking pass).
 *
 * @throws `E_ARG` naming `ranges[h]` (prefixed with the sequence's label in a batch) for a range
 *   that is reversed, unsorted, overlapping or past the head's live entries; `E_SHAPE` naming
 *   `ranges` (not one entry per KV head), `liveBias` (not `kvHeads · max(live)` floats) or
 *   `chunk.bias`; `E_DTYPE` naming `liveBias` or `queryPositions`; `E_ARG` naming
 *   `ranking.heads[h]` for a read that is not `0 ≤ sinks ≤ middleEnd ≤ live` with a non-negative
 *   integer `pages`, or that a head's `ranges` also restrict, `ranking.reduce` unless `'max'` or
 *   `'sum'`, and `ranking` for more than one query token; `E_SHAPE` naming `ranking.heads`
 *   (not one entry per KV head).
 */
export function attentionPlan(
  sequences: readonly SequencePlanInput[],
  label: (argument: string, sequence: number) => string = (argument) => argument,
): AttentionPlan {
  const positions: number[] = [];
  const owner: number[] = [];
  const perSequence: number[] = [];
  const heads: number[] = [];
  const triples: number[] = [];
  const biases: Float32Array[] = [];
  let biasWords = 0;
  let maxRead = 0;
  let anyChunkBias = false;
  const rankings: number[] = [];
  /** Per ranked head, `[its index in heads, triples reserved]`. */
  const reservations: number[] = [];
  let maxCandidates = 0;
  for (const [s, sequence] of sequences.entries()) {
    const { queryPositions, ranges, liveBias, live } = sequence;
    const kvHeads = live.length;
    if (!(queryPositions instanceof Int32Array)) {
      throw new LetheError('E_DTYPE', 'must be an Int32Array', label('queryPositions', s));
    }
    if (ranges !== undefined && ranges.length !== kvHeads) {
      throw new LetheError(
        'E_SHAPE',
        `must give one entry per KV head (${kvHeads}), got ${ranges.length}`,
        label('ranges', s),
      );
    }
    const ranked = checkRanking(sequence, kvHeads, (argument) => label(argument, s));
    for (let h = 0; h < kvHeads; h++) {
      const rank = ranked?.[h];
      if (rank !== undefined) {
        if (ranges?.[h] !== undefined) {
          throw new LetheError(
            'E_ARG',
            'ranks a head that ranges also restrict',
            label(`ranking.heads[${h}]`, s),
          );
        }
        const { firstPage, endPage } = candidatePages(rank, sequence.pageSize);
        const reserved = Math.min(rank.pages, endPage - firstPage) + 2;
        // its triples go after everything uploaded (the ranking pass writes them there)
        reservations.push(heads.length, reserved);
        heads.push(0, 0);
        rankings.push(
          s * kvHeads + h,
          rank.sinks,
          rank.middleEnd,
          live[h]!,
          rank.pages,
          sequence.tableBase + h,
          sequence.inputRow ?? positions.length,
          sequence.countSlot?.(h) ?? NO_COUNT,
          sequence.ranking!.reduce === 'sum' ? 1 : 0,
        );
        maxCandidates = Math.max(maxCandidates, endPage - firstPage);
        maxRead = Math.max(maxRead, topPagesMaxRead(rank, live[h]!, sequence.pageSize));
        continue;
      }
      const read = ranges?.[h] ?? Int32Array.of(0, live[h]!);
      if (ranges?.[h] !== undefined) checkRanges(read, live[h]!, label(`ranges[${h}]`, s));
      heads.push(triples.length / 3, 0);
      let before = 0;
      for (let r = 0; r < read.length; r += 2) {
        if (read[r + 1]! === read[r]!) continue;
        triples.push(read[r]!, read[r + 1]!, before);
        before += read[r + 1]! - read[r]!;
        heads[heads.length - 1]!++;
      }
      maxRead = Math.max(maxRead, before);
    }
    const maxLive = Math.max(0, ...live);
    if (liveBias !== undefined) {
      if (!(liveBias instanceof Float32Array)) {
        throw new LetheError('E_DTYPE', 'must be a Float32Array', label('liveBias', s));
      }
      if (liveBias.length !== kvHeads * maxLive) {
        throw new LetheError(
          'E_SHAPE',
          `must hold kvHeads · max(live) = ${kvHeads * maxLive} floats, got ${liveBias.length}`,
          label('liveBias', s),
        );
      }
    }
    perSequence.push(
      sequence.tableBase,
      positions.length,
      queryPositions.length,
      biasWords,
      liveBias === undefined ? 0 : maxLive,
      sequence.inputRow ?? positions.length,
    );
    if (liveBias !== undefined) {
      biases.push(liveBias);
      biasWords += liveBias.length;
    }
    anyChunkBias ||= sequence.chunkBias !== undefined;
    for (const position of queryPositions) {
      positions.push(position);
      owner.push(s);
    }
  }
  const tokens = positions.length;
  const kvHeads = sequences[0]?.live.length ?? 0;
  const sequenceOffset = 2 * tokens;
  const headRangesOffset = sequenceOffset + perSequence.length;
  const rangesOffset = headRangesOffset + heads.length;
  const rankingsOffset = rangesOffset + triples.length;
  const biasOffset = rankingsOffset + rankings.length;
  const chunkBiasOffset = biasOffset + biasWords;
  const uploadWords = chunkBiasOffset + (anyChunkBias ? tokens * kvHeads : 0);
  // the ranked heads' triples, after a pad that keeps them whole triples from rangesOffset
  const reservedOffset = uploadWords + ((3 - ((uploadWords - rangesOffset) % 3)) % 3);
  let reservedTriples = 0;
  for (let i = 0; i < reservations.length; i += 2) {
    heads[reservations[i]!] = (reservedOffset - rangesOffset) / 3 + reservedTriples;
    reservedTriples += reservations[i + 1]!;
  }
  const words = new Uint32Array(reservedOffset + 3 * reservedTriples);
  words.set(Int32Array.from(positions));
  words.set(owner, tokens);
  // bias offsets become absolute word offsets
  for (let s = 0; s < sequences.length; s++) perSequence[s * SEQUENCE_WORDS + 3]! += biasOffset;
  words.set(perSequence, sequenceOffset);
  words.set(heads, headRangesOffset);
  words.set(triples, rangesOffset);
  words.set(rankings, rankingsOffset);
  let at = biasOffset;
  for (const bias of biases) {
    words.set(new Uint32Array(bias.buffer, bias.byteOffset, bias.length), at);
    at += bias.length;
  }
  if (anyChunkBias) {
    sequences.forEach((sequence, s) => {
      const bias = sequence.chunkBias;
      if (bias === undefined) return;
      const first = perSequence[s * SEQUENCE_WORDS + 1]!;
      const expected = sequence.queryPositions.length * kvHeads;
      if (!(bias instanceof Float32Array) || bias.length !== expected) {
        throw new LetheError('E_SHAPE', `must hold ${expected} floats`, label('chunk.bias', s));
      }
      words.set(
        new Uint32Array(bias.buffer, bias.byteOffset, bias.length),
        chunkBiasOffset + first * kvHeads,
      );
    });
  }
  return {
    words,
    tokens,
    sequenceOffset,
    headRangesOffset,
    rangesOffset,
    chunkBiasOffset: anyChunkBias ? chunkBiasOffset : 0,
    maxRead,
    maxTokens: Math.max(0, ...sequences.map((sequence) => sequence.queryPositions.length)),
    uploadWords,
    rankingsOffset,
    rankings: rankings.length / RANK_WORDS,
    maxCandidates,
  };
}

/** A sequence's ranked reads per KV head, checked; none without a ranking. */
function checkRanking(
  sequence: SequencePlanInput,
  kvHeads: number,
  label: (argument: string) => string,
): readonly (TopPagesRead | undefined)[] | undefined {
  const { ranking, live } = sequence;
  if (ranking === undefined) return undefined;
  if (typeof ranking !== 'object' || ranking === null || !Array.isArray(ranking.heads)) {
    throw new LetheError('E_ARG', 'must be a PageRanking { reduce, heads }', label('ranking'));
  }
  if (ranking.reduce !== 'max' && ranking.reduce !== 'sum') {
    throw new LetheError(
      'E_ARG',
      `must be "max" or "sum", got ${String(ranking.reduce)}`,
      label('ranking.reduce'),
    );
  }
  if (ranking.heads.length !== kvHeads) {
    throw new LetheError(
      'E_SHAPE',
      `must give one entry per KV head (${kvHeads}), got ${ranking.heads.length}`,
      label('ranking.heads'),
    );
  }
  if (sequence.queryPositions.length !== 1 && ranking.heads.some((head) => head !== undefined)) {
    throw new LetheError(
      'E_ARG',
      `ranks pages for one query token (a decode step), got ${sequence.queryPositions.length}`,
      label('ranking'),
    );
  }
  ranking.heads.forEach((read, h) => {
    if (read === undefined) return;
    const ok =
      typeof read === 'object' &&
      read !== null &&
      [read.sinks, read.middleEnd, read.pages].every((n) => Number.isInteger(n) && n >= 0) &&
      read.sinks <= read.middleEnd &&
      read.middleEnd <= live[h]!;
    if (!ok) {
      throw new LetheError(
        'E_ARG',
        `must be { sinks, middleEnd, pages } with 0 ≤ sinks ≤ middleEnd ≤ live (${live[h]}) and pages a non-negative integer`,
        label(`ranking.heads[${h}]`),
      );
    }
  });
  return ranking.heads;
}
