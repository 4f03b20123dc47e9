import { assertInteger, LetheError } from '@lethe/core';

/**
 * NGC's min-length reward penalty (App. A.1): a rollout whose total length (prompt + completion)
 * stays below the eviction cadence never meets an eviction round, so it carries no signal for the
 * eviction policy; its reward becomes 0 (keeping the group size and the scale of negative
 * rewards). Other rewards pass through unchanged.
 *
 * @param rewards task rewards, one per rollout (finite).
 * @param totalLengths prompt + completion tokens of each rollout.
 * @param cadence eviction cadence δ (a positive integer).
 * @throws LetheError `E_ARG` naming `rewards[i]` for a non-finite reward, `totalLengths` for a
 *   length mismatch, `cadence` for a bad cadence.
 */
export function applyMinLengthPenalty(
  rewards: ArrayLike<number>,
  totalLengths: ArrayLike<number>,
  cadence: number,
): Float64Array {
  assertInteger(cadence, 'cadence', 1);
  if (totalLengths.length !== rewards.length) {
    throw new LetheError(
      'E_ARG',
      `has ${totalLengths.length} entries for ${rewards.length} rewards`,
      'totalLengths',
    );
  }
  return Float64Array.from({ length: rewards.length }, (_, i) => {
    const reward = rewards[i]!;
    if (!Number.isFinite(reward)) {
      throw new LetheError('E_ARG', `must be finite, got ${reward}`, `rewards[${i}]`);
    }
    return totalLengths[i]! < cadence ? 0 : reward;
  });
}
