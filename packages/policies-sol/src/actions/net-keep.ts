import type { AxisUsage } from './action-set';

/**
 * The paper's net keep rate: the mean of the realised per-axis usage `[κ̄, ρ̄, η̄]` over the
 * enabled axes (§5: `(κ̄ + ρ̄ + η̄) / 3` when all three are). With no axis enabled it is 1.
 *
 * @param enabled which axes the action set controls (`ActionSet.enabled`).
 */
export function netKeepRate(
  usage: AxisUsage,
  enabled: readonly [boolean, boolean, boolean],
): number {
  let total = 0;
  let axes = 0;
  for (let axis = 0; axis < 3; axis++) {
    if (!enabled[axis]) continue;
    total += usage[axis]!;
    axes += 1;
  }
  return axes === 0 ? 1 : total / axes;
}
