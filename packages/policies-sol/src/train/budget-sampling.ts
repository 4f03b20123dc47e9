import { LetheError } from '@lethe/core';
import type { RandomSource } from '@lethe/kv-cache';
import { type ActionSet, AXES, type AxisUsage } from '../actions/action-set';

/** A closed interval `[lo, hi]` ⊆ [0, 1] that one axis's requested target is drawn from. */
export type TargetRange = readonly [lo: number, hi: number];

/** The ranges the per-input budget targets `(C_κ, C_ρ, C_η)` are drawn from (§4). */
export interface BudgetRanges {
  /** Range of `C_κ`, the token-attention keep rate. */
  readonly tokenKeep: TargetRange;
  /** Range of `C_ρ`, the MLP input-channel keep rate. */
  readonly mlpInputKeep: TargetRange;
  /** Range of `C_η`, the normalised precision `q / 16`. */
  readonly precision: TargetRange;
}

/** App. B.1's ranges: κ ∈ [0.1, 1], ρ ∈ [0.4, 1], η ∈ [0.3125, 1] (5 to 16 bits). */
export const DEFAULT_BUDGET_RANGES: BudgetRanges = Object.freeze({
  tokenKeep: Object.freeze([0.1, 1] as const),
  mlpInputKeep: Object.freeze([0.4, 1] as const),
  precision: Object.freeze([0.3125, 1] as const),
});

const RANGE_FIELDS = ['tokenKeep', 'mlpInputKeep', 'precision'] as const;

/**
 * Checks budget ranges: an object with the three axes, each a pair `[lo, hi]` of finite numbers
 * with `0 ≤ lo ≤ hi ≤ 1`.
 *
 * @returns `ranges`, for chaining.
 * @throws LetheError `E_ARG` naming `<argument>` when it is not an object, or
 *   `<argument>.<axis>` for a range that is not such a pair.
 */
export function checkBudgetRanges(ranges: BudgetRanges, argument = 'budgetRanges'): BudgetRanges {
  if (typeof ranges !== 'object' || ranges === null) {
    throw new LetheError(
      'E_ARG',
      'must be an object { tokenKeep, mlpInputKeep, precision } of [lo, hi] ranges',
      argument,
    );
  }
  for (const field of RANGE_FIELDS) {
    const range = ranges[field] as unknown;
    const [lo, hi] = Array.isArray(range) ? (range as number[]) : [];
    const valid =
      Array.isArray(range) &&
      range.length === 2 &&
      typeof lo === 'number' &&
      typeof hi === 'number' &&
      lo >= 0 &&
      lo <= hi &&
      hi <= 1;
    if (!valid) {
      throw new LetheError(
        'E_ARG',
        `must be [lo, hi] with 0 ≤ lo ≤ hi ≤ 1, got ${JSON.stringify(range)}`,
        `${argument}.${field}`,
      );
    }
  }
  return ranges;
}

/**
 * Draws one input's targets `[C_κ, C_ρ, C_η]`: for an axis on which `actions` has at least two
 * levels, `lo + u·(hi − lo)` with `u` uniform in [0, 1); for an axis with a single level (not
 * controllable, §4), that level's usage, so the axis never costs a penalty. Always three
 * uniforms of `rng`, one per axis in {@link AXES} order, whatever the action set.
 *
 * @param ranges checked by the caller ({@link checkBudgetRanges}).
 */
export function sampleBudgetTargets(
  ranges: BudgetRanges,
  actions: ActionSet,
  rng: RandomSource,
): AxisUsage {
  const uniforms = rng.fillUniform(new Float32Array(AXES.length));
  const constant = actions.usage(0);
  const target = (axis: number): number => {
    if (actions.levels[AXES[axis]].length < 2) return constant[axis]!;
    const [lo, hi] = ranges[RANGE_FIELDS[axis]];
    return lo + uniforms[axis]! * (hi - lo);
  };
  return [target(0), target(1), target(2)];
}
