import {
  assertFiniteInRange,
  assertInteger,
  assertLength,
  assertNoNaN,
  LetheError,
} from '@lethe/core';
import type { Anchors } from '../geometry';
import { anchorMask } from './anchors';
import { ranksBefore } from './ranking';

/** How per-entry scores combine into a block score. */
export type BlockAggregation = 'mean' | 'max' | 'sum';

/** Number of blocks of `blockSize` consecutive entries covering `live` entries (the last may be partial). */
export function blockCount(live: number, blockSize: number): number {
  return Math.ceil(live / blockSize);
}

/**
 * Aggregates per-entry scores into blocks of `blockSize` consecutive live entries: block `b`
 * covers entries `[b·blockSize, min((b+1)·blockSize, live))`. A partial last block aggregates
 * only the entries it has (its mean divides by its own size).
 *
 * @throws LetheError `E_ARG` for NaN scores, a non-positive `blockSize` or an unknown mode.
 */
export function aggregateBlocks(
  scores: Float32Array,
  blockSize: number,
  mode: BlockAggregation,
): Float32Array {
  assertInteger(blockSize, 'blockSize', 1);
  assertNoNaN(scores, 'scores');
  if (mode !== 'mean' && mode !== 'max' && mode !== 'sum') {
    throw new LetheError('E_ARG', `unknown block aggregation "${mode}"`, 'mode');
  }
  const live = scores.length;
  const blocks = new Float32Array(blockCount(live, blockSize));
  for (let b = 0; b < blocks.length; b++) {
    const start = b * blockSize;
    const end = Math.min(start + blockSize, live);
    let total = 0;
    let best = Number.NEGATIVE_INFINITY;
    for (let i = start; i < end; i++) {
      total += scores[i];
      best = Math.max(best, scores[i]);
    }
    blocks[b] = mode === 'max' ? best : mode === 'sum' ? total : total / (end - start);
  }
  return blocks;
}

/**
 * Expands kept block indices back to the sorted live-entry indices they cover (a partial last
 * block contributes only its entries below `live`).
 *
 * @throws LetheError `E_ARG` for a block index outside `[0, blockCount(live, blockSize))` or a
 * repeated one.
 */
export function expandBlocks(blocks: Int32Array, blockSize: number, live: number): Int32Array {
  assertInteger(blockSize, 'blockSize', 1);
  assertInteger(live, 'live', 0);
  const count = blockCount(live, blockSize);
  const sorted = Int32Array.from(blocks).sort();
  let total = 0;
  for (let j = 0; j < sorted.length; j++) {
    const b = sorted[j];
    if (!(b >= 0 && b < count)) {
      throw new LetheError('E_ARG', `block ${b} outside [0, ${count})`, 'blocks');
    }
    if (j > 0 && sorted[j - 1] === b)
      throw new LetheError('E_ARG', `block ${b} repeated`, 'blocks');
    total += Math.min(blockSize, live - b * blockSize);
  }
  const entries = new Int32Array(total);
  let at = 0;
  for (const b of sorted) {
    for (let i = b * blockSize; i < Math.min((b + 1) * blockSize, live); i++) entries[at++] = i;
  }
  return entries;
}

/**
 * Block-granular top-k with anchors for one KV head. Every block holding an anchored entry is
 * kept; then the other blocks are taken best first by aggregated score (ties to the lower block),
 * each only if it still fits within `k` entries (a full block that would overflow is skipped; the
 * shorter last block may still fit). The result (sorted entry indices) therefore never exceeds
 * `k` entries unless the anchored blocks alone do, and falls short of `k` by less than one block
 * when enough blocks exist.
 *
 * With `threshold` set, only blocks whose aggregated score is ≥ `threshold` are candidates, and
 * the block holding the newest entry is always kept (threshold selection, capped at `k`).
 *
 * @param scores Scores of the live entries of one head, `[live]`; higher is more important.
 * @param positions Token positions of the same entries, `[live]`, increasing.
 */
export function selectTopBlocks(
  scores: Float32Array,
  positions: Int32Array,
  anchors: Anchors,
  k: number,
  blockSize: number,
  mode: BlockAggregation,
  threshold?: number,
): Int32Array {
  assertLength(positions, scores.length, 'positions');
  assertInteger(k, 'k', 0);
  if (threshold !== undefined) assertFiniteInRange(threshold, 'threshold');
  const live = scores.length;
  const blockScores = aggregateBlocks(scores, blockSize, mode);
  const anchored = anchorMask(positions, anchors);
  const size = (b: number): number => Math.min(blockSize, live - b * blockSize);
  const newest = blockScores.length - 1;
  const chosen: number[] = [];
  const candidates: number[] = [];
  let kept = 0;
  for (let b = 0; b < blockScores.length; b++) {
    const forced =
      anchored.subarray(b * blockSize, b * blockSize + size(b)).includes(1) ||
      (threshold !== undefined && b === newest);
    if (forced) {
      chosen.push(b);
      kept += size(b);
    } else if (threshold === undefined || blockScores[b] >= threshold) {
      candidates.push(b);
    }
  }
  candidates.sort((a, b) => (ranksBefore(blockScores, a, b) ? -1 : 1));
  for (const b of candidates) {
    if (kept + size(b) > k) continue;
    chosen.push(b);
    kept += size(b);
  }
  return expandBlocks(Int32Array.from(chosen), blockSize, live);
}
