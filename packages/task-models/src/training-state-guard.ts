import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LetheError } from '@lethe/core';
import { canonicalJson, type JsonValue } from '@lethe/eval';
import { writeFileAtomic } from '@lethe/model/node';
import type { PretrainSettings } from './pretrain-settings';

/** File in a training-state directory recording the settings of the run it belongs to. */
export const TRAINING_STATE_SETTINGS_FILE = 'lethe-pretrain-settings.json';

/** The settings that determine the weights (not where they are saved or how they are scored). */
function weightSettings(settings: PretrainSettings): Record<string, JsonValue> {
  return {
    task: settings.task,
    taskOptions: settings.taskOptions,
    modelSize: { ...settings.modelSize },
    init: settings.init ?? null,
    steps: settings.steps,
    batchSize: settings.batchSize,
    // Float rounding differs with the parts, so a resume keeps them (absent: one pass).
    ...(settings.microBatchSize === undefined ? {} : { microBatchSize: settings.microBatchSize }),
    seed: settings.seed,
    lr: settings.lr,
    warmupSteps: settings.warmupSteps,
    minLrRatio: settings.minLrRatio,
    weightDecay: settings.weightDecay,
    clipNorm: settings.clipNorm,
    window: settings.window ?? null,
    bucketSteps: settings.bucketSteps ?? null,
    ...(settings.lossOn === 'all' ? { lossOn: 'all' } : {}),
    // The validation examples are kept out of training: they can change the data.
    ...(settings.probeExamples === 0
      ? {}
      : { probe: { examples: settings.probeExamples, seed: settings.probeSeed } }),
  };
}

/**
 * Ties a training-state directory to one run: records the settings that determine the weights
 * on first use, and refuses a directory recorded for other settings (resuming it would mix two
 * runs: another schedule, data or model). The trainer itself only checks the seed and shapes.
 *
 * @throws LetheError `E_ARG` naming `dir` and the first differing setting; `E_FORMAT` naming
 *   the settings file when it is not JSON.
 */
export async function guardTrainingState(dir: string, settings: PretrainSettings): Promise<void> {
  const path = join(dir, TRAINING_STATE_SETTINGS_FILE);
  const current = weightSettings(settings);
  let text: string | undefined;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (text === undefined) {
    await mkdir(dir, { recursive: true });
    await writeFileAtomic(path, `${JSON.stringify(current, null, 2)}\n`);
    return;
  }
  let recorded: Record<string, JsonValue>;
  try {
    recorded = JSON.parse(text) as Record<string, JsonValue>;
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not JSON: ${(error as Error).message}`, path);
  }
  for (const key of Object.keys(current)) {
    if (canonicalJson(recorded[key] ?? null) !== canonicalJson(current[key]!)) {
      throw new LetheError(
        'E_ARG',
        `holds the training state of another run (setting "${key}" was ${JSON.stringify(recorded[key])}, now ${JSON.stringify(current[key])}); delete it or rerun with the same settings`,
        dir,
      );
    }
  }
}
