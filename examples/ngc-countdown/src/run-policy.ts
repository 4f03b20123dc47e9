import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LetheError } from '@lethe/core';
import {
  formatPolicyManifest,
  POLICY_FORMAT,
  POLICY_FORMAT_VERSION,
  POLICY_MANIFEST,
  type PolicyManifest,
} from '@lethe/kv-cache';
import { writeFileAtomic } from '@lethe/model/node';
import { recordedTagTokens } from './interoception-tokenizer';
import { NGC_RUN_FILE } from './run-file';
import type { TrainSettings } from './train-settings';

/**
 * The policy manifest of a trained run (`policy.json`): the `ngc` provider, the block size,
 * window and score-to-logit map the run was trained with — and for a run trained with
 * interoception, how its prompts carry the rate tag — and the run's own model (`"."`): what the
 * evaluation harness (`lethe eval --policy ngc --policy-dir <run>`) reads.
 */
export function ngcRunManifest(
  settings: Pick<TrainSettings, 'blockSize' | 'window' | 'logits' | 'interoception'> &
    Partial<Pick<TrainSettings, 'tagTokens'>>,
): PolicyManifest {
  const { blockSize, window, logits } = settings;
  return {
    format: POLICY_FORMAT,
    version: POLICY_FORMAT_VERSION,
    provider: 'ngc',
    options: {
      blockSize,
      window,
      logits,
      ...(settings.interoception ? { interoception: recordedTagTokens(settings) } : {}),
    },
    model: '.',
  };
}

/**
 * Readies the run `dir` (flag `--run label=dir`) for the harness evaluation: it must have been
 * trained with the evaluation's `cadence`, and gets its `policy.json` when it was trained before
 * `npm run train` wrote one (from the settings its {@link NGC_RUN_FILE} records).
 *
 * @returns whether `policy.json` was written.
 * @throws LetheError `E_ARG` naming `--run <label>` for a directory without a readable
 *   {@link NGC_RUN_FILE}, or another cadence.
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
  const manifest = join(dir, POLICY_MANIFEST);
  try {
    await access(manifest);
    return false;
  } catch {
    await writeFileAtomic(manifest, formatPolicyManifest(ngcRunManifest(settings)));
    return true;
  }
}
