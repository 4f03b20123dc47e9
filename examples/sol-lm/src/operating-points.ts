import { LetheError } from '@lethe/core';
import type { ComputeTargets } from '@lethe/kv-cache';
import { type ActionSet, FULL_PRECISION_BITS } from '@lethe/policies-sol';

/**
 * The compute targets of operating point `s` ∈ [0, 1] of an action set: every enabled axis is
 * asked for `lowest + s · (highest − lowest)` of its levels (in budget units: κ, ρ, q / 16), so
 * `s = 0` is the cheapest schedule, `s = 1` the dense one, and points in between need a mix of
 * levels; an axis the set does not vary is asked for its only level.
 *
 * @throws LetheError `E_ARG` naming `point` outside [0, 1].
 */
export function operatingPoint(actions: ActionSet, point: number): ComputeTargets {
  if (!(typeof point === 'number' && point >= 0 && point <= 1)) {
    throw new LetheError('E_ARG', `must be in [0, 1], got ${point}`, 'point');
  }
  const { tokenKeep, mlpInputKeep, activationBits } = actions.levels;
  const along = (levels: readonly number[], scale: number) => {
    const lowest = levels[0]! / scale;
    const highest = levels[levels.length - 1]! / scale;
    return lowest + point * (highest - lowest);
  };
  return {
    tokenKeep: along(tokenKeep, 1),
    mlpInputKeep: along(mlpInputKeep, 1),
    precision: along(activationBits, FULL_PRECISION_BITS),
  };
}
