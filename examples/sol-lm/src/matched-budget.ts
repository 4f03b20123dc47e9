import type { ComputeTargets, ControlledAxes } from '@lethe/kv-cache';
import type { ActionLevels, ActionSet } from '@lethe/policies-sol';

/** The options that make a SOL baseline run the controller's action set and horizon. */
export function baselineOptions(
  actions: ActionSet,
  horizon: number,
): { readonly actions: ActionLevels; readonly horizon: number } {
  return {
    actions: {
      tokenKeep: [...actions.levels.tokenKeep],
      mlpInputKeep: [...actions.levels.mlpInputKeep],
      activationBits: [...actions.levels.activationBits],
    },
    horizon,
  };
}

/** The knobs an action set varies (a net keep-rate averages these). */
export function controlledAxes(actions: ActionSet): ControlledAxes {
  const [tokenKeep, mlpInputKeep, activationBits] = actions.enabled;
  return { tokenKeep, mlpInputKeep, activationBits };
}

/**
 * The compute budget that asks a baseline for what SOL realised, axis by axis (each at most 1):
 * a comparison at matched budgets.
 */
export function matchedBudget(realised: readonly [number, number, number]): {
  readonly targets: ComputeTargets;
} {
  const [tokenKeep, mlpInputKeep, precision] = realised.map((x) => Math.min(1, x));
  return { targets: { tokenKeep: tokenKeep!, mlpInputKeep: mlpInputKeep!, precision: precision! } };
}
