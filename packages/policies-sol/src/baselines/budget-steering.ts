import { assertFiniteInRange, assertInteger, LetheError } from '@lethe/core';
import type { ActionSet } from '../actions/action-set';
import { bracketLevels, LEVEL_TOLERANCE } from './level-bracket';
import { SteeredEpisodeBudget } from './steered-budget';
import { actionAt, usageLevels } from './usage-levels';

/**
 * One axis's level for the next step under the greedy budget-steering rule of the SOL paper's
 * App. C (EMC, DAC): choose between the two nearest levels around the remaining required average
 * `r`, then keep the target attainable over the remaining steps.
 *
 * 1. Bracket `r` by the levels ({@link bracketLevels}): a level within tolerance of `r`, or the
 *    nearest extreme when `r` is outside the levels' range, is chosen outright.
 * 2. Otherwise, with `w = (r − lower) / (upper − lower)`, prefer `upper` iff `need ≥ 1 − w`:
 *    the higher the need, the likelier the larger level, and a need uniform on [0, 1] picks
 *    `upper` with probability `w`, which is exactly the mix whose mean is `r`.
 * 3. If another step remains after this one and the preferred level would leave a required
 *    average for those `R − 1` steps outside [lowest level, highest level] (the target no longer
 *    attainable), take the other level of the pair. When `r` is attainable and `R ≥ 2` at least
 *    one of the pair keeps it attainable, so the rule never loses an attainable target; on the
 *    last step the episode's average then ends within `(upper − lower) / N` of the target, `N`
 *    its effective steps.
 *
 * @param levels the axis's levels in budget units, strictly ascending.
 * @param required `r`: the average the remaining steps (this one included) must realise.
 * @param remaining `R`: steps left in the episode, this one included.
 * @param need `u` in [0, 1]: how much this step calls for compute (higher spends more).
 * @returns the index of the chosen level.
 * @throws LetheError `E_ARG` naming `remaining` unless it is an integer ≥ 1, `need` unless it is
 *   a finite number in [0, 1], `required` unless it is finite, `levels` for a list that is not
 *   strictly ascending finite numbers.
 */
export function steerLevel(
  levels: readonly number[],
  required: number,
  remaining: number,
  need: number,
): number {
  assertInteger(remaining, 'remaining', 1);
  assertFiniteInRange(need, 'need', 0, 1);
  if (!Number.isFinite(required)) {
    throw new LetheError('E_ARG', `must be a finite number, got ${required}`, 'required');
  }
  const { lower, upper, weight } = bracketLevels(levels, required);
  if (lower === upper) return lower;
  const preferred = need >= 1 - weight ? upper : lower;
  const after = remaining - 1;
  if (after === 0) return preferred;
  const rest = required * remaining - levels[preferred]!;
  const slack = LEVEL_TOLERANCE * after;
  const attainable =
    rest >= after * levels[0]! - slack && rest <= after * levels[levels.length - 1]! + slack;
  if (attainable) return preferred;
  return preferred === upper ? lower : upper;
}

/**
 * The action for the next step of an episode under the greedy budget-steering rule, applied to
 * every axis independently ({@link steerLevel} with that axis's required average
 * `budget.required()`, the episode's remaining steps and the same `need`); the action set being a
 * Cartesian product, the chosen levels form one action. An axis with one level keeps it.
 *
 * @param need `u` in [0, 1], the step's need score (EMC's normalised entropy, DAC's drift).
 * @throws LetheError `E_ARG` naming `actions` unless it is an `ActionSet`, `budget` unless it is
 *   a `SteeredEpisodeBudget`, `need` unless it is in [0, 1]; `E_STATE` naming `budget` when its
 *   episode is done.
 */
export function steerAction(
  actions: ActionSet,
  budget: SteeredEpisodeBudget,
  need: number,
): number {
  const levels = usageLevels(actions);
  if (!(budget instanceof SteeredEpisodeBudget)) {
    throw new LetheError('E_ARG', 'must be a SteeredEpisodeBudget', 'budget');
  }
  const required = budget.required();
  const { remaining } = budget;
  const level = (axis: number) => steerLevel(levels[axis]!, required[axis]!, remaining, need);
  return actionAt(actions, [level(0), level(1), level(2)]);
}
