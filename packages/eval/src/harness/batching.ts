import { assertInteger } from '@lethe/core';
import { requireArray } from './arguments';

/**
 * Splits sequences `0 … lengths.length − 1` into generation batches of at most `batchSize`.
 * With `byLength`, sequences are first grouped by their full-cache length (groups in order of
 * first appearance, sequences in index order within a group), so that every batch shares one
 * capacity and one policy instance; without it, batches are consecutive index ranges.
 *
 * @throws LetheError `E_ARG` naming `lengths` when it is not an array, `batchSize` unless it is
 *   an integer ≥ 1.
 */
export function planBatches(
  lengths: readonly number[],
  batchSize: number,
  byLength: boolean,
): number[][] {
  requireArray(lengths, 'lengths');
  assertInteger(batchSize, 'batchSize', 1);
  const groups: number[][] = [];
  if (byLength) {
    const byValue = new Map<number, number[]>();
    lengths.forEach((length, i) => {
      let group = byValue.get(length);
      if (group === undefined) {
        group = [];
        byValue.set(length, group);
        groups.push(group);
      }
      group.push(i);
    });
  } else {
    groups.push(lengths.map((_, i) => i));
  }
  const batches: number[][] = [];
  for (const group of groups) {
    for (let start = 0; start < group.length; start += batchSize) {
      batches.push(group.slice(start, start + batchSize));
    }
  }
  return batches;
}
