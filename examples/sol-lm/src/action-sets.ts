import { LetheError } from '@lethe/core';
import {
  ACTION_PRESETS,
  type ActionLevels,
  type ActionPreset,
  ActionSet,
} from '@lethe/policies-sol';

/** Token sparsity alone (SOL-C): κ ∈ {0.1, 0.2, …, 1}, dense MLP, 16 bits. */
const TOKEN_ONLY: ActionLevels = {
  tokenKeep: Array.from({ length: 10 }, (_, i) => Number(((i + 1) / 10).toFixed(1))),
  mlpInputKeep: [1],
  activationBits: [16],
};

/** The action-set names the example takes: App. B's presets and `C-10`. */
export const ACTION_SET_NAMES = [...Object.keys(ACTION_PRESETS), 'C-10'] as const;

/**
 * The action set called `name`.
 *
 * @throws LetheError `E_ARG` naming `--actions` for an unknown name.
 */
export function actionSetNamed(name: string): ActionSet {
  if (name === 'C-10') return new ActionSet(TOKEN_ONLY);
  if (!Object.hasOwn(ACTION_PRESETS, name)) {
    throw new LetheError(
      'E_ARG',
      `unknown action set "${name}"; expected one of ${ACTION_SET_NAMES.join(', ')}`,
      '--actions',
    );
  }
  return new ActionSet(ACTION_PRESETS[name as ActionPreset]);
}
