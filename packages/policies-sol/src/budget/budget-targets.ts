import { assertFiniteInRange, LetheError } from '@lethe/core';
import type { ComputeTargets } from '@lethe/kv-cache';
import type { AxisUsage } from '../actions/action-set';

/**
 * Requested episode-average usage per axis (the paper's `C_κ, C_ρ, C_η`), each in [0, 1]: a
 * compute budget's `targets` (`ComputeTargets` of `@lethe/kv-cache`).
 */
export type BudgetTargets = ComputeTargets;

/**
 * The targets as `[C_κ, C_ρ, C_η]`, validated.
 *
 * @throws LetheError `E_ARG` naming `targets.<axis>` for a value that is not a finite number in
 *   [0, 1], or `targets` itself when it is not an object.
 */
export function targetVector(targets: BudgetTargets, argument = 'targets'): AxisUsage {
  if (typeof targets !== 'object' || targets === null) {
    throw new LetheError(
      'E_ARG',
      'must be an object { tokenKeep, mlpInputKeep, precision }',
      argument,
    );
  }
  return [
    assertFiniteInRange(targets.tokenKeep, `${argument}.tokenKeep`, 0, 1),
    assertFiniteInRange(targets.mlpInputKeep, `${argument}.mlpInputKeep`, 0, 1),
    assertFiniteInRange(targets.precision, `${argument}.precision`, 0, 1),
  ];
}
