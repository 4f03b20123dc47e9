import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { GenerationTask } from '@lethe/eval';
import { loadTaskModel } from '@lethe/eval/node';
import {
  DEFAULT_BAM_HIDDEN,
  DEFAULT_MLP_DEPTH,
  type FeatureSet,
  featureWidth,
  type ScorerSpec,
} from '@lethe/policies-namm';
import {
  NammEvolution,
  type NammGenerationRecord,
  type NammProgress,
} from '@lethe/policies-namm/train';
import {
  readNammCheckpoint,
  workerPoolEvaluator,
  writeNammCheckpoint,
  writeNammPolicyDirectory,
} from '@lethe/policies-namm/train/node';
import { LetheError } from '@lethe/tensor';
import { generationNammTask } from './generation-namm-task';

/** What {@link evolveRun} needs. */
export interface EvolveSettings {
  /** The task model NAMM evolves on (a `lethe pretrain` directory of a generation task). */
  readonly model: string;
  /** The run directory: `checkpoint.json`, and the policy directory of the latest mean. */
  readonly out: string;
  readonly generations: number;
  readonly population: number;
  /** CMA-ES covariance model. */
  readonly covariance: 'full' | 'diagonal';
  readonly promptsPerTask: number;
  readonly sigma0: number;
  readonly seed: number;
  readonly updateInterval: number;
  /** Most entries per KV head besides the threshold (undefined: NAMM alone decides). */
  readonly capacity: number | undefined;
  readonly scorer: 'bam' | 'mlp';
  readonly features: FeatureSet;
  /** Worker threads (1: this thread). */
  readonly threads: number;
}

/** The checkpoint file of a run directory. */
export const CHECKPOINT_FILE = 'checkpoint.json';

/**
 * Evolves a NAMM on the task of `settings.model` and writes the run directory: the checkpoint
 * after every generation (a rerun of the same command resumes from it, bit for bit) and the
 * policy directory of the CMA-ES mean (`policy.json` + `namm.safetensors`, the registry's `namm`
 * provider reads it). Returns the history.
 *
 * @throws LetheError `E_ARG` naming `model` when its task is not a generation task; the
 *   trainer's errors (bad settings, a checkpoint from other settings).
 */
export async function evolveRun(
  settings: EvolveSettings,
  onProgress?: (progress: NammProgress) => void,
): Promise<NammGenerationRecord[]> {
  const { model, task } = await loadTaskModel(settings.model);
  if (task.kind !== 'generation') {
    throw new LetheError(
      'E_ARG',
      `holds a ${task.kind} task; NAMM evolves on generation tasks`,
      'model',
    );
  }
  const checkpointPath = join(settings.out, CHECKPOINT_FILE);
  const resumeFrom = existsSync(checkpointPath)
    ? await readNammCheckpoint(checkpointPath)
    : undefined;
  const evaluate =
    settings.threads > 1 ? workerPoolEvaluator(model, { threads: settings.threads }) : undefined;
  const features = settings.features;
  const scorer: ScorerSpec =
    settings.scorer === 'bam'
      ? { kind: 'bam', features: featureWidth(features), hidden: DEFAULT_BAM_HIDDEN }
      : { kind: 'mlp', features: featureWidth(features), depth: DEFAULT_MLP_DEPTH };
  try {
    const evolution = new NammEvolution({
      model,
      tasks: [generationNammTask(task as GenerationTask)],
      stages: [{ tasks: [task.name], generations: settings.generations }],
      promptsPerTask: settings.promptsPerTask,
      scorer,
      features,
      population: settings.population,
      covariance: settings.covariance,
      sigma0: settings.sigma0,
      seed: settings.seed,
      updateInterval: settings.updateInterval,
      capacity: settings.capacity,
      evaluate,
      resumeFrom,
      onCheckpoint: async (checkpoint) => {
        await writeNammCheckpoint(checkpointPath, checkpoint);
        await writeNammPolicyDirectory(settings.out, evolution.parameters(), {
          updateInterval: settings.updateInterval,
        });
      },
      onProgress,
    });
    await evolution.train();
    return evolution.history;
  } finally {
    await evaluate?.close();
    model.dispose();
  }
}
