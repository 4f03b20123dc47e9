import type { AxisUsage } from '../actions/action-set';

/** The reference code's penalty weights `α = (α_κ, α_ρ, α_η)` (App. B). */
export const DEFAULT_PENALTY_WEIGHTS: AxisUsage = Object.freeze([100, 100, 200]) as AxisUsage;

/** The tolerance band `τ` of the paper (§4). */
export const DEFAULT_TOLERANCE = 0.02;

/** The squared hinge outside the band, `ψ(x; τ) = max(|x| − τ, 0)²` (§4, eq. 2). */
export function hingePenalty(deviation: number, tolerance = DEFAULT_TOLERANCE): number {
  const excess = Math.max(Math.abs(deviation) - tolerance, 0);
  return excess * excess;
}

/**
 * The episode penalty `C = Σ_axis α_axis · ψ(mean_axis − C_axis; τ)` (eq. 2) for the realised
 * averages over an episode's effective steps; 0 for an episode without effective steps.
 *
 * @param realised `[κ̄, ρ̄, η̄]`, or undefined when no step was effective.
 * @param targets `[C_κ, C_ρ, C_η]`.
 */
export function budgetPenalty(
  realised: AxisUsage | undefined,
  targets: AxisUsage,
  weights: AxisUsage = DEFAULT_PENALTY_WEIGHTS,
  tolerance = DEFAULT_TOLERANCE,
): number {
  if (realised === undefined) return 0;
  let total = 0;
  for (let axis = 0; axis < 3; axis++) {
    total += weights[axis]! * hingePenalty(realised[axis]! - targets[axis]!, tolerance);
  }
  return total;
}
