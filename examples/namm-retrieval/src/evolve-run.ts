import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { LetheError } from '@lethe/core';
import type { GenerationTask, TaskExample } from '@lethe/eval';
import { modelIdentity } from '@lethe/model';
import { writePolicyDirectory } from '@lethe/model/node';
import {
  DEFAULT_BAM_HIDDEN,
  DEFAULT_MLP_DEPTH,
  type FeatureSet,
  featureWidth,
  nammPolicyContents,
  type ScorerSpec,
} from '@lethe/policies-namm';
import {
  NammEvolution,
  type NammGenerationRecord,
  type NammProgress,
  type NammTask,
  type PopulationEvaluator,
} from '@lethe/policies-namm/train';
import {
  queueEvaluator,
  readNammCheckpoint,
  workerPoolEvaluator,
  writeNammCheckpoint,
} from '@lethe/policies-namm/train/node';
import { taskVariant } from '@lethe/task-models';
import { EVOLUTION_SEED, generationNammTask } from './generation-namm-task';
import { loadGenerationTaskModel } from './generation-task-model';

/** A variant of the run's task that a run evolves on too: its options over the run's task's. */
export interface ExtraTask {
  /** The task's name in the run (history, report); unique, not the model's task name. */
  readonly label: string;
  readonly options: Readonly<Record<string, unknown>>;
}

/** Seeds between the evolution seed blocks of a run's tasks (task i draws from EVOLUTION_SEED + i · this). */
export const TASK_SEED_STRIDE = 100_000;

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
  /**
   * A Redis server (`redis://host:port`) whose `lethe worker` processes evaluate each generation
   * (`queueEvaluator`) instead of this process's threads; they read the model at `model`.
   */
  readonly redis?: string;
  /**
   * Options over the model's task's for the task the run evolves on (e.g. one member of the
   * suite at one length); none: the model's task as it was trained.
   */
  readonly taskOptions?: Readonly<Record<string, unknown>>;
  /** Variants of the run's task to evolve on besides it (none: the run's task alone). */
  readonly extraTasks?: readonly ExtraTask[];
  /**
   * The paper's incremental evolution: one stage per task, in order (the model's task, then each
   * extra task), each adding its task and continuing from the previous stage's mean, the
   * generations split evenly (the remainder to the last stage). Default false: every task from
   * the first generation.
   */
  readonly incremental?: boolean;
}

/** The checkpoint file of a run directory. */
export const CHECKPOINT_FILE = 'checkpoint.json';

/**
 * Evolves a NAMM on the task of `settings.model` and writes the run directory: the checkpoint
 * after every generation (a rerun of the same command resumes from it, bit for bit) and the
 * policy directory of the CMA-ES mean (`policy.json` + `namm.safetensors`, the registry's `namm`
 * provider reads it). Returns the history.
 *
 * @throws LetheError `E_ARG` naming `model` when its task is not a generation task; the task's
 *   errors for options it refuses, naming `taskOptions` (and what they named); the trainer's
 *   errors (bad settings, a checkpoint from other settings or other task definitions).
 */
export async function evolveRun(
  settings: EvolveSettings,
  onProgress?: (progress: NammProgress) => void,
): Promise<NammGenerationRecord[]> {
  const { model, task } = await loadGenerationTaskModel(settings.model, settings.taskOptions, {
    model: 'model',
    taskOptions: 'taskOptions',
  });
  let evaluate: (PopulationEvaluator & { close(): Promise<void> }) | undefined;
  try {
    const baseModel = await modelIdentity(model);
    const tasks = runTasks(task, settings.extraTasks ?? []);
    const stages = evolutionStages(
      tasks.map((t) => t.name),
      settings.generations,
      settings.incremental ?? false,
    );
    const checkpointPath = join(settings.out, CHECKPOINT_FILE);
    const resumeFrom = existsSync(checkpointPath)
      ? await readNammCheckpoint(checkpointPath)
      : undefined;
    if (settings.redis !== undefined && settings.threads > 1) {
      throw new LetheError(
        'E_ARG',
        'is given with --redis: the workers run the members',
        'threads',
      );
    }
    evaluate =
      settings.redis !== undefined
        ? Object.assign(
            queueEvaluator(settings.model, { redis: settings.redis, onRefused: warnRefused }),
            {
              close: async () => undefined,
            },
          )
        : settings.threads > 1
          ? workerPoolEvaluator(model, { threads: settings.threads })
          : undefined;
    const features = settings.features;
    const scorer: ScorerSpec =
      settings.scorer === 'bam'
        ? { kind: 'bam', features: featureWidth(features), hidden: DEFAULT_BAM_HIDDEN }
        : { kind: 'mlp', features: featureWidth(features), depth: DEFAULT_MLP_DEPTH };
    const evolution = new NammEvolution({
      model,
      tasks,
      stages,
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
        await writePolicyDirectory(
          settings.out,
          nammPolicyContents(evolution.parameters(), {
            options: { updateInterval: settings.updateInterval },
            baseModel,
          }),
        );
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

/**
 * The stages of a run over `tasks`: one with every task, or (incremental) one per task with the
 * generations split evenly, the remainder to the last.
 *
 * @throws LetheError `E_ARG` naming `generations` when an incremental run has fewer generations
 *   than tasks.
 */
export function evolutionStages(
  tasks: readonly string[],
  generations: number,
  incremental: boolean,
): { tasks: string[]; generations: number }[] {
  if (!incremental) return [{ tasks: [...tasks], generations }];
  const share = Math.floor(generations / tasks.length);
  if (share < 1) {
    throw new LetheError(
      'E_ARG',
      `${generations} cannot give each of ${tasks.length} incremental stages a generation`,
      'generations',
    );
  }
  return tasks.map((task, i) => ({
    tasks: [task],
    generations: i === tasks.length - 1 ? generations - share * (tasks.length - 1) : share,
  }));
}

/**
 * The run's tasks: `task` (evolution seeds from {@link EVOLUTION_SEED}), then each extra task,
 * its options over `task`'s, with a seed block of its own.
 *
 * @throws LetheError `E_ARG` naming `extraTasks[i].label` when a label repeats a task name of the
 *   run, `extraTasks[i].options` for options the task refuses.
 */
function runTasks(task: GenerationTask, extras: readonly ExtraTask[]): NammTask<TaskExample>[] {
  return [
    generationNammTask(task),
    ...extras.map((extra, i) => {
      if (extra.label === task.name || extras.findIndex((e) => e.label === extra.label) !== i) {
        throw new LetheError(
          'E_ARG',
          `"${extra.label}" repeats a task name of the run`,
          `extraTasks[${i}].label`,
        );
      }
      const variant = taskVariant(task, extra.options, `extraTasks[${i}].options`);
      return generationNammTask(
        variant as GenerationTask,
        extra.label,
        EVOLUTION_SEED + (i + 1) * TASK_SEED_STRIDE,
      );
    }),
  ];
}

/** A worker's refusal of the run (its packages or model files differ), on stderr. */
function warnRefused(message: string): void {
  process.stderr.write(`\nwarning: ${message}\n`);
}
