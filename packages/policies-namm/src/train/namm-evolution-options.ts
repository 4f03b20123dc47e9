import { assertInteger, LetheError } from '@lethe/core';
import type { DecoderModel } from '@lethe/model';
import {
  type FeatureSet,
  featureWidth,
  identityNormalization,
  type SpectrogramNormalization,
} from '../features/token-features';
import { NAMM_DEFAULT_UPDATE_INTERVAL } from '../policy/namm-provider';
import { DEFAULT_BAM_HIDDEN, type ScorerSpec } from '../scorer/scorer-spec';
import { checkGenome } from './check-genome';
import type { PopulationEvaluator } from './evaluate-population';
import { checkEvaluationSettings } from './evaluation-settings';
import type { NammProgress } from './evolution-record';
import type { NammCheckpoint, NammEvolutionSettings } from './namm-checkpoint';
import type { NammTask } from './namm-task';
import { checkStages, type NammStage } from './stages';

/** CMA-ES population size λ (the paper's Table 9 and the reference runs). */
export const DEFAULT_NAMM_POPULATION = 32;

/**
 * Initial CMA-ES step size σ0: 0.065, the reference code's value for its published runs; the
 * paper's Table 9 prints 0.65. σ0 sets how wild the first sampled networks are. With
 * unit-variance features and the default BAM (4,172 weights, every one drawn with deviation
 * σ0 around the zero genome), 0.065 gives scores of RMS ≈ 0.34, almost all from the linear
 * readout `w · x`: a smooth start that CMA-ES adapts from. At 0.65 the attention and
 * multiplicative terms dominate, with scores of RMS ≈ 60, far from the linear part's ≈ 3: close
 * to random functions of the features. Pass `sigma0: 0.65` for the table's setting.
 */
export const DEFAULT_NAMM_SIGMA0 = 0.065;

/**
 * The CMA-ES covariance model: `full` — the paper's (a P × P matrix: with the default BAM's
 * 4,172 parameters two 139 MB matrices, an O(P³) eigendecomposition every few dozen generations
 * and checkpoints of hundreds of MB) — or `diagonal`, separable CMA-ES (Ros & Hansen, 2008:
 * O(P) per sample and update, checkpoints of kilobytes; its faster learning rates suit large P).
 */
export type NammCovariance = 'full' | 'diagonal';

/**
 * Configuration of a `NammEvolution`. CMA-ES runs with c_m = 1 and μ = ⌊λ/2⌋ recombination
 * weights (elite ratio 0.5), active covariance update and full covariance: es-cmaes' defaults,
 * the reference code's choices.
 */
export interface NammEvolutionOptions {
  /** The frozen model NAMM evolves on (never changed). */
  readonly model: DecoderModel;
  /** Every task a stage may name (unique names). */
  readonly tasks: readonly NammTask[];
  /** The incremental stages, in order (see {@link NammStage}). */
  readonly stages: readonly NammStage[];
  /** Prompts per task per generation (the paper: 64), slots `0 … promptsPerTask − 1`. */
  readonly promptsPerTask: number;
  /** The scoring network (default BAM, hidden 32, input the features' width). */
  readonly scorer?: ScorerSpec;
  /** The features it reads (default `spectrogram`). */
  readonly features?: FeatureSet;
  /**
   * The spectrogram normalisation (fixed for the run and saved with the policy). Default:
   * measured before the first generation (`measureSpectrogramNormalization`) on the first stage's
   * prompts of generation 0, as the paper does on its first task; identity for `age` features.
   */
  readonly normalization?: SpectrogramNormalization;
  /** λ, members per generation, an integer ≥ 2 (default {@link DEFAULT_NAMM_POPULATION}). */
  readonly population?: number;
  /** The CMA-ES covariance model (default `full`, the paper's). */
  readonly covariance?: NammCovariance;
  /** Initial step size σ0 > 0 of every stage (default {@link DEFAULT_NAMM_SIGMA0}). */
  readonly sigma0?: number;
  /** Seed of the CMA-ES samples: stage s draws with `seed + s` (default 0). */
  readonly seed?: number;
  /** The first stage's initial mean (default zeros, which keeps everything); ignored when resuming. */
  readonly initialGenome?: ArrayLike<number>;
  /** Tokens between NAMM rounds (default `NAMM_DEFAULT_UPDATE_INTERVAL`). */
  readonly updateInterval?: number;
  /** Entries scoring below it are evicted (default 0). */
  readonly threshold?: number;
  /** The reference code's equal-length heads (default false). */
  readonly equalHeads?: boolean;
  /** A capacity budget (most entries per KV head) beside the threshold (default none). */
  readonly capacity?: number;
  /** Evaluates populations (default: `evaluatePopulation` in this thread). */
  readonly evaluate?: PopulationEvaluator;
  /** A checkpoint to continue from; it must come from a run with the same settings. */
  readonly resumeFrom?: NammCheckpoint;
  /** Called with the checkpoint after every generation (awaited). */
  readonly onCheckpoint?: (checkpoint: NammCheckpoint) => void | Promise<void>;
  /** Called after every generation, after the checkpoint. */
  readonly onProgress?: (progress: NammProgress) => void;
  /** Stops `train()` before the next generation. */
  readonly signal?: AbortSignal;
}

/** Options checked and defaults filled in: the settings a checkpoint records, but the normalisation. */
export type ResolvedSettings = Omit<NammEvolutionSettings, 'normalization'>;

/**
 * Checks the options and fills in the defaults.
 *
 * @throws LetheError `E_ARG` naming `tasks` / `tasks[i].name` (missing or repeated name),
 *   `tasks[i].maxNewTokens`, the stage at fault (see `checkStages`), `promptsPerTask`,
 *   `population` (not an integer ≥ 2), `covariance` (not `full` or `diagonal`), `sigma0` (not
 *   finite and > 0), `seed` (not a safe
 *   integer ≥ 0), a NAMM setting (see `checkEvaluationSettings`: `scorer.*`, `features`,
 *   `normalization.*`, `updateInterval`, `threshold`, `capacity`) or `initialGenome` (wrong
 *   length or a non-finite value).
 */
export function resolveOptions(options: NammEvolutionOptions): ResolvedSettings {
  if (!Array.isArray(options.tasks)) throw new LetheError('E_ARG', 'must be an array', 'tasks');
  const names = new Set<string>();
  options.tasks.forEach((task, i) => {
    if (typeof task.name !== 'string' || task.name === '' || names.has(task.name)) {
      throw new LetheError(
        'E_ARG',
        `must be a unique non-empty name, got ${JSON.stringify(task.name)}`,
        `tasks[${i}].name`,
      );
    }
    names.add(task.name);
    assertInteger(task.maxNewTokens, `tasks[${i}].maxNewTokens`, 1);
    if (task.definition !== undefined && typeof task.definition !== 'string') {
      throw new LetheError('E_ARG', 'must be a string when given', `tasks[${i}].definition`);
    }
  });
  checkStages(options.stages, names);
  assertInteger(options.promptsPerTask, 'promptsPerTask', 1);
  const population = options.population ?? DEFAULT_NAMM_POPULATION;
  assertInteger(population, 'population', 2);
  const sigma0 = options.sigma0 ?? DEFAULT_NAMM_SIGMA0;
  if (!(Number.isFinite(sigma0) && sigma0 > 0)) {
    throw new LetheError('E_ARG', `must be a finite number > 0, got ${sigma0}`, 'sigma0');
  }
  const seed = options.seed ?? 0;
  if (!(Number.isSafeInteger(seed) && seed >= 0)) {
    throw new LetheError('E_ARG', `must be a safe integer ≥ 0, got ${seed}`, 'seed');
  }
  const covariance = options.covariance ?? 'full';
  if (covariance !== 'full' && covariance !== 'diagonal') {
    throw new LetheError(
      'E_ARG',
      `must be 'full' or 'diagonal', got ${String(covariance)}`,
      'covariance',
    );
  }
  const features = options.features ?? 'spectrogram';
  const settings = {
    scorer: options.scorer ?? {
      kind: 'bam',
      features: featureWidth(features),
      hidden: DEFAULT_BAM_HIDDEN,
    },
    features,
    updateInterval: options.updateInterval ?? NAMM_DEFAULT_UPDATE_INTERVAL,
    threshold: options.threshold ?? 0,
    equalHeads: options.equalHeads ?? false,
    capacity: options.capacity,
  } as const;
  checkEvaluationSettings({
    ...settings,
    normalization: options.normalization ?? identityNormalization(),
  });
  if (options.initialGenome !== undefined) {
    checkGenome(options.initialGenome, settings.scorer, 'initialGenome');
  }
  return {
    ...settings,
    capacity: settings.capacity ?? null,
    population,
    covariance,
    sigma0,
    seed,
    promptsPerTask: options.promptsPerTask,
    stages: options.stages.map((s) => ({ tasks: [...s.tasks], generations: s.generations })),
    ...taskDefinitionsOf(options.tasks),
  };
}

/** `{ taskDefinitions }` of the tasks that define themselves, or nothing when none does. */
function taskDefinitionsOf(tasks: readonly NammTask[]): {
  taskDefinitions?: Record<string, string>;
} {
  const defined = tasks.filter((task) => task.definition !== undefined);
  if (defined.length === 0) return {};
  return {
    taskDefinitions: Object.fromEntries(defined.map((task) => [task.name, task.definition!])),
  };
}

/**
 * Checks that `checkpoint` comes from a run with these settings. The stages it finished must be
 * the first of `settings.stages`, its current stage the same tasks with at least the generations
 * it has done (a run may go on longer, or with stages added or changed after it); the
 * normalisation, when given, must be the checkpoint's.
 *
 * @throws LetheError `E_CHECKPOINT` naming the setting that differs (`features`, `scorer`,
 *   `population`, `covariance`, `sigma0`, `seed`, `promptsPerTask`, `updateInterval`, `threshold`,
 *   `equalHeads`, `capacity`, `stages` / `stages[i]`, `normalization`), or `tasks` when a task
 *   that has run is defined otherwise than the checkpoint records (its `definition`).
 */
export function checkResume(
  checkpoint: NammCheckpoint,
  settings: ResolvedSettings,
  normalization: SpectrogramNormalization | undefined,
): void {
  const saved = checkpoint.settings;
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const fields = [
    'features',
    'scorer',
    'population',
    'covariance',
    'sigma0',
    'seed',
    'promptsPerTask',
    'updateInterval',
    'threshold',
    'equalHeads',
    'capacity',
  ] as const;
  for (const field of fields) {
    if (!same(saved[field], settings[field])) {
      throw new LetheError(
        'E_CHECKPOINT',
        `is ${JSON.stringify(settings[field])} but the checkpoint's run had ${JSON.stringify(saved[field])}`,
        field,
      );
    }
  }
  // Stages before the checkpoint's are history and must be the same; its own stage may run longer
  // or shorter (not below what it has done); later stages are still a plan and may change.
  const current = checkpoint.stage;
  const ended = saved.stages.slice(0, current).reduce((sum, stage) => sum + stage.generations, 0);
  saved.stages.slice(0, current + 1).forEach((stage, i) => {
    const now = settings.stages[i];
    const changed =
      now === undefined ||
      !same(stage.tasks, now.tasks) ||
      (i < current
        ? stage.generations !== now.generations
        : ended + now.generations < checkpoint.generation);
    if (changed) {
      throw new LetheError(
        'E_CHECKPOINT',
        `is ${JSON.stringify(now)} but the checkpoint's run had ${JSON.stringify(stage)}${i === current ? `, ${checkpoint.generation - ended} generations of it done` : ''}`,
        `stages[${i}]`,
      );
    }
  });
  const ran = new Set(saved.stages.slice(0, current + 1).flatMap((stage) => stage.tasks));
  for (const name of ran) {
    const recorded = saved.taskDefinitions?.[name];
    const now = settings.taskDefinitions?.[name];
    if (recorded !== undefined && recorded !== now) {
      throw new LetheError(
        'E_CHECKPOINT',
        `task "${name}" is defined as ${now ?? 'nothing'} but the checkpoint's run defined it as ${recorded} (its full-cache scores belong to those examples)`,
        'tasks',
      );
    }
  }
  if (
    normalization !== undefined &&
    !same(
      { mean: [...normalization.mean], std: [...normalization.std] },
      { mean: saved.normalization.mean, std: saved.normalization.std },
    )
  ) {
    throw new LetheError(
      'E_CHECKPOINT',
      "differs from the statistics the checkpoint's run used",
      'normalization',
    );
  }
}
