import { LetheError } from '@lethe/core';
import type { ActionLevels } from './action-set';

const range = (from: number, to: number, step: number): number[] =>
  Array.from({ length: Math.round((to - from) / step) + 1 }, (_, i) =>
    Number((from + i * step).toFixed(4)),
  );

/**
 * The action spaces of the paper's App. B (joint control of κ, ρ and q):
 *
 * | preset | κ | ρ | q | actions |
 * |---|---|---|---|--:|
 * | `2L` (SOL-J-2L) | 0.1, 1 | 0.6, 1 | 5, 16 | 8 |
 * | `3L` (SOL-J-3L) | 0.1, 0.6, 1 | 0.4, 0.8, 1 | 5, 7, 16 | 27 |
 * | `FL` (SOL-J-FL) | 0.1, 0.2, …, 1 | 0.40, 0.45, …, 1 | 5, 6, …, 16 | 1,560 |
 * | `FL-336` (the horizon study, B.2) | 0.1, 0.4, 0.7, 1 | 0.45, 0.5, 0.6, …, 1 | 5, 6, …, 16 | 336 |
 */
export const ACTION_PRESETS = Object.freeze({
  '2L': { tokenKeep: [0.1, 1], mlpInputKeep: [0.6, 1], activationBits: [5, 16] },
  '3L': { tokenKeep: [0.1, 0.6, 1], mlpInputKeep: [0.4, 0.8, 1], activationBits: [5, 7, 16] },
  FL: {
    tokenKeep: range(0.1, 1, 0.1),
    mlpInputKeep: range(0.4, 1, 0.05),
    activationBits: range(5, 16, 1),
  },
  'FL-336': {
    tokenKeep: [0.1, 0.4, 0.7, 1],
    mlpInputKeep: [0.45, ...range(0.5, 1, 0.1)],
    activationBits: range(5, 16, 1),
  },
} satisfies Record<string, ActionLevels>);

/** Name of a preset of {@link ACTION_PRESETS}. */
export type ActionPreset = keyof typeof ACTION_PRESETS;

/**
 * The levels of a named preset.
 *
 * @throws LetheError `E_ARG` naming `preset` for an unknown name.
 */
export function presetLevels(preset: string): ActionLevels {
  if (!Object.hasOwn(ACTION_PRESETS, preset)) {
    throw new LetheError(
      'E_ARG',
      `unknown action preset "${preset}"; expected one of ${Object.keys(ACTION_PRESETS).join(', ')}`,
      'preset',
    );
  }
  return ACTION_PRESETS[preset as ActionPreset];
}
