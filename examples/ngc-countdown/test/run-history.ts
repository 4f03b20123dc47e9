import type { RunHistory } from '../src/report-content';
import { DEFAULT_TRAIN_SETTINGS, type TrainSettings } from '../src/train-settings';

/** A run of the default NGC settings with `changes`, without a history: what the report reads. */
export function runHistory(label: string, changes: Partial<TrainSettings>): RunHistory {
  return {
    label,
    settings: { ...DEFAULT_TRAIN_SETTINGS, model: 'm', variant: 'ngc', ...changes },
    history: [],
  };
}
