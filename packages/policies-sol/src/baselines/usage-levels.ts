import { LetheError } from '@lethe/core';
import { ActionSet, FULL_PRECISION_BITS } from '../actions/action-set';

/**
 * The levels of each axis of an action set in budget units, `[κ levels, ρ levels, q/16 levels]`
 * (the units of `ActionSet.usage` and of the targets), each ascending.
 */
export type UsageLevels = readonly [readonly number[], readonly number[], readonly number[]];

/**
 * The per-axis levels of `actions` in budget units (bit widths divided by 16).
 *
 * @throws LetheError `E_ARG` naming `actions` unless it is an `ActionSet`.
 */
export function usageLevels(actions: ActionSet): UsageLevels {
  checkActionSet(actions);
  const { tokenKeep, mlpInputKeep, activationBits } = actions.levels;
  return [tokenKeep, mlpInputKeep, activationBits.map((bits) => bits / FULL_PRECISION_BITS)];
}

/**
 * The action of `actions` whose axis `i` takes its `levels[i]`-th level (indices into
 * {@link usageLevels}`(actions)[i]`).
 *
 * @throws LetheError `E_ARG` naming `actions` unless it is an `ActionSet`, `levels[<axis>]`
 *   unless each index is an integer within its axis's levels.
 */
export function actionAt(actions: ActionSet, levels: readonly [number, number, number]): number {
  checkActionSet(actions);
  const { tokenKeep, mlpInputKeep, activationBits } = actions.levels;
  const level = (values: readonly number[], axis: number) => {
    const index = levels[axis]!;
    if (!(Number.isInteger(index) && index >= 0 && index < values.length)) {
      throw new LetheError(
        'E_ARG',
        `must be an integer in [0, ${values.length}), got ${index}`,
        `levels[${axis}]`,
      );
    }
    return values[index]!;
  };
  return actions.indexOf({
    tokenKeep: level(tokenKeep, 0),
    mlpInputKeep: level(mlpInputKeep, 1),
    activationBits: level(activationBits, 2),
  });
}

function checkActionSet(actions: ActionSet): void {
  if (!(actions instanceof ActionSet)) {
    throw new LetheError('E_ARG', 'must be an ActionSet', 'actions');
  }
}
