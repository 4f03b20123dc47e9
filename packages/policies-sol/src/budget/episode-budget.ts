import { assertInteger } from '@lethe/core';
import type { AxisUsage } from '../actions/action-set';

/** Length of the budget features `s_t` (§4): progress, effective flag, 3 targets, 3 deviations. */
export const BUDGET_FEATURES = 8;

/**
 * The budget bookkeeping of one episode of `horizon` decode steps: which step comes next, the
 * realised usage over its effective steps, and the controller's budget features
 * `s_t = [t/T, 1_eff,t, C_κ, C_ρ, C_η, κ̄_<t − C_κ, ρ̄_<t − C_ρ, η̄_<t − C_η]` (§4), with
 * `t = 1 … T` the step about to be taken and the running averages over the episode's earlier
 * effective steps (equal to the targets, so deviations 0, before the first).
 */
export class EpisodeBudget {
  private readonly sums = [0, 0, 0];
  private effectiveSteps = 0;
  private taken = 0;

  /**
   * @param horizon `T`, a positive integer.
   * @param targets `[C_κ, C_ρ, C_η]`, validated by the caller (`targetVector`).
   * @throws LetheError `E_ARG` naming `horizon`.
   */
  constructor(
    readonly horizon: number,
    readonly targets: AxisUsage,
  ) {
    assertInteger(horizon, 'horizon', 1);
  }

  /** Steps taken so far in this episode. */
  get steps(): number {
    return this.taken;
  }

  /** Whether all `T` steps have been taken. */
  get done(): boolean {
    return this.taken >= this.horizon;
  }

  /** `[κ̄, ρ̄, η̄]` over the effective steps so far, or undefined when there was none. */
  realised(): AxisUsage | undefined {
    if (this.effectiveSteps === 0) return undefined;
    const n = this.effectiveSteps;
    return [this.sums[0]! / n, this.sums[1]! / n, this.sums[2]! / n];
  }

  /**
   * The features `s_t` of the next step, written into `out` at `offset`.
   *
   * @param effective whether the next step counts toward the budget.
   */
  features(effective: boolean, out = new Float32Array(BUDGET_FEATURES), offset = 0): Float32Array {
    const mean = this.realised() ?? this.targets;
    out[offset] = (this.taken + 1) / this.horizon;
    out[offset + 1] = effective ? 1 : 0;
    for (let axis = 0; axis < 3; axis++) {
      out[offset + 2 + axis] = this.targets[axis]!;
      out[offset + 5 + axis] = mean[axis]! - this.targets[axis]!;
    }
    return out;
  }

  /** Records the step just taken: its usage `[κ, ρ, η]` counts when `effective`. */
  record(usage: AxisUsage, effective: boolean): void {
    this.taken += 1;
    if (!effective) return;
    this.effectiveSteps += 1;
    for (let axis = 0; axis < 3; axis++) this.sums[axis]! += usage[axis]!;
  }
}
