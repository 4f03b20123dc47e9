import type { TrainSettings } from './train-settings';

/**
 * A run's settings as a string that two runs share exactly when every setting but `ignored`
 * agrees (fields in name order, so the order they were recorded in does not matter) — how the
 * report finds the runs that differ by one choice: an ablation's variant, a repeat's seed.
 */
export function settingsKey(
  settings: TrainSettings,
  ignored: readonly (keyof TrainSettings)[],
): string {
  return JSON.stringify(
    Object.entries(settings)
      .filter(([name]) => !ignored.includes(name as keyof TrainSettings))
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
}
