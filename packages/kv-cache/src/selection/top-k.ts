import { assertInteger, assertLength, assertNoNaN } from '@lethe/core';
import type { Anchors } from '../geometry';
import { anchorMask } from './anchors';
import { ranksBefore } from './ranking';

/**
 * Indices of the entries kept by a top-k choice that must include every `required` entry: all
 * required entries, plus the best `k − (number required)` of the others by score (higher first,
 * ties to the lower index, see {@link ranksBefore}). The result is sorted ascending and has
 * `min(n, max(k, number required))` elements.
 *
 * Runs in O(n log k) with a bounded heap of the current best candidates.
 *
 * @param scores One score per entry; higher means more important.
 * @param required 0/1 per entry, same length as `scores`.
 * @param k Target number of kept entries, a non-negative integer.
 * @throws LetheError `E_ARG` for NaN scores or a bad `k`, `E_SHAPE` for a length mismatch.
 */
export function selectTopKRequired(
  scores: Float32Array,
  required: Uint8Array,
  k: number,
): Int32Array {
  assertInteger(k, 'k', 0);
  assertLength(required, scores.length, 'required');
  assertNoNaN(scores, 'scores');
  let requiredCount = 0;
  for (const flag of required) requiredCount += flag === 0 ? 0 : 1;
  const extra = Math.max(0, Math.min(k, scores.length) - requiredCount);

  // Min-heap on rank: heap[0] is the worst of the best `extra` candidates seen so far.
  const heap = new Int32Array(extra);
  let size = 0;
  const worse = (a: number, b: number): boolean => ranksBefore(scores, b, a);
  const siftUp = (at: number): void => {
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!worse(heap[at], heap[parent])) return;
      [heap[at], heap[parent]] = [heap[parent], heap[at]];
      at = parent;
    }
  };
  const siftDown = (at: number): void => {
    for (;;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let worst = at;
      if (left < size && worse(heap[left], heap[worst])) worst = left;
      if (right < size && worse(heap[right], heap[worst])) worst = right;
      if (worst === at) return;
      [heap[at], heap[worst]] = [heap[worst], heap[at]];
      at = worst;
    }
  };
  if (extra > 0) {
    for (let i = 0; i < scores.length; i++) {
      if (required[i] !== 0) continue;
      if (size < extra) {
        heap[size] = i;
        size += 1;
        siftUp(size - 1);
      } else if (ranksBefore(scores, i, heap[0])) {
        heap[0] = i;
        siftDown(0);
      }
    }
  }

  const kept = new Int32Array(requiredCount + size);
  let at = 0;
  for (let i = 0; i < required.length; i++) if (required[i] !== 0) kept[at++] = i;
  kept.set(heap.subarray(0, size), at);
  return kept.sort();
}

/**
 * Indices of the `k` highest scores (ties to the lower index, the order of {@link ranksBefore}),
 * ascending: {@link selectTopKRequired} with nothing required, in O(n) on average — the `k`-th
 * largest score by quickselect on a copy, then one pass that counts the scores above it and one
 * that collects the chosen indices — the form a per-step read (`tokenKeepRead`) uses. No pass
 * branches on a score (comparisons become 0 / 1 increments), so scores that change at every
 * step cost no mispredicted branches.
 *
 * @param scores One score per entry, no NaN (not checked: a hot path).
 * @param k Number of indices, an integer in `[0, scores.length]` (not checked).
 */
export function topKIndices(scores: Float32Array, k: number): Int32Array {
  // one slot more than `k`: the collection writes every index and only counts those it takes
  const out = new Int32Array(k + 1);
  if (k === 0) return out.subarray(0, 0);
  const threshold = kthLargest(scores, k);
  let above = 0;
  for (let i = 0; i < scores.length; i++) above += +(scores[i] > threshold);
  let ties = k - above; // scores equal to the threshold still to take, lowest indices first
  let at = 0;
  for (let i = 0; i < scores.length; i++) {
    const score = scores[i];
    const tied = +(score === threshold);
    const take = +(score > threshold) | (tied & +(ties > 0));
    out[at] = i;
    at += take;
    ties -= tied & take;
  }
  return out.subarray(0, k);
}

/**
 * The `k`-th largest of `scores` (1 ≤ k ≤ length), by quickselect on a copy with three-way
 * partitions (greater than the pivot, equal, smaller), each a branch-free Lomuto pass.
 */
function kthLargest(scores: Float32Array, k: number): number {
  const work = scores.slice();
  const target = k - 1; // its index in descending order
  let lo = 0;
  let hi = work.length - 1;
  while (lo < hi) {
    const pivot = work[(lo + hi) >>> 1];
    let greater = lo; // [lo, greater) holds the scores above the pivot
    for (let i = lo; i <= hi; i++) {
      const value = work[i];
      work[i] = work[greater];
      work[greater] = value;
      greater += +(value > pivot);
    }
    if (target < greater) {
      hi = greater - 1;
      continue;
    }
    let equal = greater; // [greater, equal) holds the scores equal to the pivot (at least itself)
    for (let i = greater; i <= hi; i++) {
      const value = work[i];
      work[i] = work[equal];
      work[equal] = value;
      equal += +(value >= pivot);
    }
    if (target < equal) return pivot;
    lo = equal;
  }
  return work[target];
}

/**
 * Top-k with anchors for one KV head: keeps the anchored entries (token position below
 * `anchors.sinks`, or among the `anchors.window` most recent) and fills up to `k` with the
 * highest-scoring other entries, ties to the lower index. Returns sorted live-entry indices, of
 * count `min(live, max(k, number anchored))`.
 *
 * @param scores Scores of the live entries of one head, `[live]`; higher is more important.
 * @param positions Token positions of the same entries, `[live]`, increasing.
 * @throws LetheError `E_ARG` for NaN in `scores` or a bad `k`, `E_SHAPE` for a length mismatch.
 */
export function selectTopK(
  scores: Float32Array,
  positions: Int32Array,
  anchors: Anchors,
  k: number,
): Int32Array {
  assertLength(positions, scores.length, 'positions');
  return selectTopKRequired(scores, anchorMask(positions, anchors), k);
}
