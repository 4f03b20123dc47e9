import { LetheError } from '@lethe/core';
import { expandBlocks } from '@lethe/kv-cache';
import type { EvictionRoundRecord } from './rollout';

/** `evictedAt` of a token no round dropped: visible to every later query. */
const NEVER = 0x7fffffff;

/**
 * When each token of one layer stopped being visible, rebuilt from the layer's eviction rounds
 * alone (App. A.3): a token dropped by the round at `step` is seen by queries `j ≤ i < step`.
 *
 * @param length tokens in the replayed sequence.
 * @param rounds the layer's rounds in the order they ran.
 * @returns `evictedAt[j]` per token (`0x7fffffff` for tokens never dropped).
 * @throws LetheError `E_STATE` naming `rounds` when a round is out of order or drops a token
 *   that was not live.
 */
export function evictedAtFromRounds(
  length: number,
  rounds: readonly EvictionRoundRecord[],
): Int32Array {
  const evictedAt = new Int32Array(length).fill(NEVER);
  let last = 0;
  for (const round of rounds) {
    if (round.step < last) {
      throw new LetheError('E_STATE', `round at step ${round.step} after one at ${last}`, 'rounds');
    }
    last = round.step;
    const kept = new Uint8Array(round.positions.length);
    for (const i of expandBlocks(round.order, round.blockSize, round.positions.length)) kept[i] = 1;
    round.positions.forEach((position, i) => {
      if (kept[i]) return;
      if (evictedAt[position] !== NEVER || position >= round.step) {
        throw new LetheError(
          'E_STATE',
          `round at step ${round.step} drops token ${position}, which was not live`,
          'rounds',
        );
      }
      if (position < length) evictedAt[position] = round.step;
    });
  }
  return evictedAt;
}

/**
 * Writes the replay visibility of one layer, `[T, T]` 0/1 (row = query, column = key), into
 * `out` at `offset`: query `i` sees key `j` when `j ≤ i < evictedAt[j]`. Rows and columns past
 * `evictedAt.length` (right padding up to `T`) see only themselves.
 */
export function writeReplayMask(
  evictedAt: Int32Array,
  size: number,
  out: Float32Array,
  offset: number,
): void {
  for (let j = 0; j < evictedAt.length; j++) {
    const end = Math.min(evictedAt[j]!, evictedAt.length);
    for (let i = j; i < end; i++) out[offset + i * size + j] = 1;
  }
  for (let i = evictedAt.length; i < size; i++) out[offset + i * size + i] = 1;
}
