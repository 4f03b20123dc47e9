import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LetheError } from '@lethe/core';
import { POLICY_MANIFEST } from '@lethe/kv-cache';
import { type DecoderModel, modelIdentity } from '@lethe/model';
import { readModelDirectory, writePolicyDirectory } from '@lethe/model/node';
import { ngcPolicyContents } from '@lethe/policies-ngc';
import { NGC_RUN_FILE } from './run-file';
import { recordedTagTokens } from './run-tokenizer';
import type { TrainSettings } from './train-settings';

/** The settings of a run that its policy manifest records. */
export type RunPolicySettings = Pick<
  TrainSettings,
  'blockSize' | 'window' | 'logits' | 'interoception'
> &
  Partial<Pick<TrainSettings, 'tagTokens'>>;

/**
 * Writes the policy manifest of the run `dir` (`policy.json`, with `writePolicyDirectory`): the
 * `ngc` provider with the block size, window and score-to-logit map the run was trained with —
 * and for a run trained with interoception, how its prompts carry the rate tag — and the run's
 * own model (`"model": "."`), whose identity it records as `baseModel`: what the evaluation
 * harness (`lethe eval --policy ngc --policy-dir <run>`) reads, and checks against the weights it
 * loads.
 *
 * @param model the run's trained model: the weights its directory holds.
 */
export async function writeRunPolicy(
  dir: string,
  settings: RunPolicySettings,
  model: DecoderModel,
): Promise<void> {
  const { blockSize, window, logits } = settings;
  const options = {
    blockSize,
    window,
    logits,
    ...(settings.interoception ? { interoception: recordedTagTokens(settings) } : {}),
  };
  await writePolicyDirectory(
    dir,
    ngcPolicyContents({ options, baseModel: await modelIdentity(model) }),
  );
}

/**
 * Readies the run `dir` (flag `--run label=dir`) for the harness evaluation: it must have been
 * trained with the evaluation's `cadence`, and gets its `policy.json` ({@link writeRunPolicy},
 * from the settings its {@link NGC_RUN_FILE} records and the model it holds) when it was trained
 * before `npm run train` wrote one.
 *
 * @returns whether `policy.json` was written.
 * @throws LetheError `E_ARG` naming `--run <label>` for a directory without a readable
 *   {@link NGC_RUN_FILE}, or another cadence; the errors of `readModelDirectory` when a run
 *   without `policy.json` holds no readable model.
 */
export async function prepareRunForEvaluation(
  label: string,
  dir: string,
  cadence: number,
): Promise<boolean> {
  const argument = `--run ${label}`;
  let settings: TrainSettings;
  try {
    settings = JSON.parse(await readFile(join(dir, NGC_RUN_FILE), 'utf8')).settings;
  } catch (error) {
    throw new LetheError(
      'E_ARG',
      `${dir} is not a trained run (no readable ${NGC_RUN_FILE}: ${(error as Error).message})`,
      argument,
    );
  }
  if (settings.cadence !== cadence) {
    throw new LetheError(
      'E_ARG',
      `${dir} was trained with cadence ${settings.cadence}; every method here evicts every ${cadence} tokens`,
      argument,
    );
  }
  try {
    await access(join(dir, POLICY_MANIFEST));
    return false;
  } catch {
    const { model } = await readModelDirectory(dir, { tokenizer: 'optional' });
    try {
      await writeRunPolicy(dir, settings, model);
    } finally {
      model.dispose();
    }
    return true;
  }
}
