import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LetheError } from '@lethe/core';
import type { DecoderModel } from '@lethe/model';
import { readModelDirectory } from '@lethe/model/node';
import type { TagForm } from '@lethe/policies-ngc';
import type { TaskTokenizer } from '@lethe/task-models';
import type { TaskModel } from '@lethe/task-models/node';
import { NGC_RUN_FILE } from './run-file';
import { recordedTagTokens, runTokenizer } from './run-tokenizer';
import type { TrainSettings } from './train-settings';

/** The weights and tokenizer a run continues from. */
export interface RunStart {
  /** The trained model (the caller owns it: `dispose()` it when done). */
  readonly model: DecoderModel;
  readonly tokenizer: TaskTokenizer;
}

/**
 * Loads the trained model of an earlier run (a directory written by `trainRun`) so a new run
 * continues from it, e.g. with a curriculum that goes on where the earlier one stopped.
 *
 * @param dir the earlier run's output directory.
 * @param base the task model the new run names; the earlier run must have started from the
 *   same one (equal `lethe-model.json`).
 * @param settings the new run's tag settings; the earlier run must agree on whether prompts are
 *   tagged and how the tag is tokenized (both shape the vocabulary).
 * @throws LetheError `E_ARG` naming `init` when `dir` is not a finished run, started from another
 *   task model, or disagrees on the tag; the errors of `readModelDirectory` for its files.
 */
export async function loadRunStart(
  dir: string,
  base: TaskModel,
  settings: Pick<TrainSettings, 'interoception' | 'tagTokens'>,
): Promise<RunStart> {
  const { interoception, tagTokens } = settings;
  const path = join(dir, NGC_RUN_FILE);
  let run: { baseModel?: unknown; settings?: { interoception?: boolean; tagTokens?: TagForm } };
  try {
    run = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new LetheError(
      'E_ARG',
      `${dir} is not a finished NGC run (${path}: ${(error as Error).message})`,
      'init',
    );
  }
  if (JSON.stringify(run.baseModel) !== JSON.stringify(base.manifest)) {
    throw new LetheError(
      'E_ARG',
      `${dir} was trained from another task model than ${base.dir}`,
      'init',
    );
  }
  if (run.settings?.interoception !== interoception) {
    throw new LetheError(
      'E_ARG',
      `${dir} was trained ${interoception ? 'without' : 'with'} interoception; the new run must agree`,
      'init',
    );
  }
  const recorded = recordedTagTokens(run.settings);
  if (interoception && recorded !== tagTokens) {
    throw new LetheError(
      'E_ARG',
      `${dir} tokenized the tag as ${recorded}, the new run as ${tagTokens}`,
      'init',
    );
  }
  const { model } = await readModelDirectory(dir);
  return { model, tokenizer: runTokenizer(base.tokenizer, run.settings) };
}
