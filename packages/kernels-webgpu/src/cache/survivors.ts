import type { LayerObservation } from '@lethe/kv-cache';

/**
 * Per KV head, the old live indices that survived an eviction round, in increasing order,
 * matched by token position (unique and increasing within a head) between the observations
 * before and after the round.
 */
export function survivorsOf(before: LayerObservation, after: LayerObservation): Int32Array[] {
  return Array.from({ length: before.kvHeads }, (_, h) => {
    const kept = new Int32Array(after.liveCounts[h]!);
    let i = 0;
    for (let j = 0; j < kept.length; j++) {
      const position = after.positions[h * after.maxLive + j]!;
      while (before.positions[h * before.maxLive + i]! !== position) i++;
      kept[j] = i++;
    }
    return kept;
  });
}
