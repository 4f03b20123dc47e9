import type { LayerControls } from '@lethe/kv-cache';
import { type ActionSet, FULL_PRECISION_BITS, type SolAction } from './action-set';

/**
 * The layer controls of an action, as `SolPolicy` applies them: `tokenKeep`, `mlpInputKeep`
 * and `activationBits` set only for the knobs below their dense level; undefined when every
 * knob is dense (the layer runs dense).
 */
export function actionControls(action: SolAction): LayerControls | undefined {
  const controls: { tokenKeep?: number; mlpInputKeep?: number; activationBits?: number } = {};
  if (action.tokenKeep < 1) controls.tokenKeep = action.tokenKeep;
  if (action.mlpInputKeep < 1) controls.mlpInputKeep = action.mlpInputKeep;
  if (action.activationBits < FULL_PRECISION_BITS) controls.activationBits = action.activationBits;
  return Object.keys(controls).length === 0 ? undefined : Object.freeze(controls);
}

/** {@link actionControls} of every action of `actions`, indexed by action. */
export function actionControlTable(actions: ActionSet): readonly (LayerControls | undefined)[] {
  return Array.from({ length: actions.size }, (_, a) => actionControls(actions.action(a)));
}
