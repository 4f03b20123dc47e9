import { LetheError } from '@lethe/core';

/** The paper's discount `γ` of the return-to-go (§4, eq. 3). */
export const DEFAULT_DISCOUNT = 0.85;

/**
 * Checks a discount factor: a finite number in (0, 1].
 *
 * @returns `gamma`, for chaining.
 * @throws LetheError `E_ARG` naming `argument` (default `gamma`).
 */
export function checkDiscount(gamma: number, argument = 'gamma'): number {
  if (!(typeof gamma === 'number' && gamma > 0 && gamma <= 1)) {
    throw new LetheError('E_ARG', `must be a number in (0, 1], got ${gamma}`, argument);
  }
  return gamma;
}

/**
 * The discounted return-to-go of an episode's rewards, `G_t = Σ_{u ≥ t} γ^{u−t} r_u` (eq. 3),
 * computed backwards in float64 (`G_T = r_T`, `G_t = r_t + γ·G_{t+1}`).
 *
 * @throws LetheError `E_ARG` naming `gamma` outside (0, 1], or `rewards[t]` for a reward that is
 *   not finite.
 */
export function discountedReturns(
  rewards: ArrayLike<number>,
  gamma = DEFAULT_DISCOUNT,
): Float64Array {
  checkDiscount(gamma);
  const out = new Float64Array(rewards.length);
  let next = 0;
  for (let t = rewards.length - 1; t >= 0; t--) {
    const r = rewards[t]!;
    if (!Number.isFinite(r)) {
      throw new LetheError('E_ARG', `must be a finite reward, got ${r}`, `rewards[${t}]`);
    }
    next = r + gamma * next;
    out[t] = next;
  }
  return out;
}

/**
 * The per-step GRPO signal of one schedule, `r'_t = G_t − C` (eq. 4): the return-to-go of its
 * task rewards minus its episode penalty `C` (eq. 2), which is broadcast to every step.
 *
 * @throws LetheError as {@link discountedReturns}; `E_ARG` naming `penalty` when it is not a
 *   finite number ≥ 0.
 */
export function penalisedReturns(
  rewards: ArrayLike<number>,
  penalty: number,
  gamma = DEFAULT_DISCOUNT,
): Float64Array {
  if (!(Number.isFinite(penalty) && penalty >= 0)) {
    throw new LetheError('E_ARG', `must be a finite number ≥ 0, got ${penalty}`, 'penalty');
  }
  const returns = discountedReturns(rewards, gamma);
  for (let t = 0; t < returns.length; t++) returns[t] = returns[t]! - penalty;
  return returns;
}
