import { resolve } from 'node:path';
import { LetheError, withArgument } from '@lethe/core';
import type { Task } from '@lethe/eval';
import {
  assertJson,
  createTask,
  DEFAULT_BATCH_SIZE,
  isPlainObject,
  type JsonValue,
} from '@lethe/eval';
import type { TrainProgress } from '@lethe/model';
import type { TaskModelProbe } from './manifest';
import { type ModelSize, resolveModelSize } from './model-size';
import type { LossOn } from './task-sequence';
import { TRAINING_SEED_OFFSET } from './training-seed';

/**
 * Every setting that determines a task model's weights and its recorded score, resolved (no
 * defaults left). `pretrainCommand` spells them all out, so the command recreates the model
 * even if defaults change.
 */
export interface PretrainSettings {
  /** Task registry name. */
  readonly task: string;
  /** Task options as given (`createTask` fills the rest). */
  readonly taskOptions: Readonly<Record<string, JsonValue>>;
  readonly modelSize: ModelSize;
  /**
   * Task-model directory whose weights the run starts from (fine-tuning, a length curriculum),
   * or `undefined` for random weights from `seed`. Its architecture and tokenizer must be the
   * run's (`initialModel`).
   */
  readonly init: string | undefined;
  /** Optimizer updates. */
  readonly steps: number;
  /** Sequences per update. */
  readonly batchSize: number;
  /**
   * Sequences per forward and backward pass when fewer than `batchSize`: each update's batch is
   * cut into parts of this many, whose gradients are summed by their share of the trained
   * tokens before the one optimizer step (`nextTokenMicroBatches`) — the same update up to float
   * rounding, in a part's memory. `undefined`: the whole batch in one pass.
   */
  readonly microBatchSize: number | undefined;
  /**
   * Seed of the batch order and of random initial weights (without `init`); the examples come
   * from `trainingSeed(seed)`.
   */
  readonly seed: number;
  /** Peak learning rate (warmup, then cosine decay to `minLrRatio · lr`). */
  readonly lr: number;
  readonly warmupSteps: number;
  readonly minLrRatio: number;
  /** AdamW decoupled weight decay (norm weights excluded). */
  readonly weightDecay: number;
  /** Global gradient-norm clip. */
  readonly clipNorm: number;
  /** LM only: tokens per training window (`undefined` for generation tasks). */
  readonly window: number | undefined;
  /**
   * Generation tasks only: updates whose examples are sorted by length together, so batches
   * pad less (`generationBatches`); 1 = off; `undefined` for LM.
   */
  readonly bucketSteps: number | undefined;
  /**
   * Generation tasks only: the tokens the loss falls on, the completion's (default) or every
   * token's (`all`, the prompt's too: see `taskSequence`); `undefined` for LM.
   */
  readonly lossOn: LossOn | undefined;
  /** Held-out examples of the final full-cache evaluation (0: none). */
  readonly evalExamples: number;
  /** Seed of the held-out examples (below `TRAINING_SEED_OFFSET`). */
  readonly evalSeed: number;
  /** Generation batch size of that evaluation. */
  readonly evalBatchSize: number;
  /**
   * Validation examples scored with the full cache while training (0: none): examples
   * `0 … probeExamples − 1` of `probeSeed`, kept out of training like the held-out ones, so a
   * curriculum can watch its stages without looking at the held-out score.
   */
  readonly probeExamples: number;
  /** Seed of the validation examples (below `TRAINING_SEED_OFFSET`, not `evalSeed`). */
  readonly probeSeed: number;
  /** Updates between two validation scores (and one after the last update); with probes only. */
  readonly probeEvery: number | undefined;
  /** Output model directory. */
  readonly out: string;
}

/** Options of `pretrainTaskModel`: the settings (all but `task` and `out` optional) plus run controls. */
export interface PretrainOptions extends Partial<Omit<PretrainSettings, 'modelSize' | 'window'>> {
  readonly task: string;
  readonly out: string;
  readonly modelSize?: Partial<ModelSize>;
  readonly window?: number;
  /**
   * Directory of the trainer's resumable state (`directoryCheckpointStore`): written every
   * `checkpointEvery` updates and when `signal` stops the run; a run started with the same
   * settings and directory continues from it, with bit-identical results. Default: no state.
   */
  readonly checkpointDir?: string;
  /** Updates between state writes (default 50; needs `checkpointDir`). */
  readonly checkpointEvery?: number;
  /** Called after every update. */
  readonly onProgress?: (progress: TrainProgress) => void;
  /** Called with each validation score (`probeExamples`), after the update it follows. */
  readonly onProbe?: (probe: TaskModelProbe) => void;
  /** Called when the run enters a phase (training, the held-out evaluation, saving). */
  readonly onPhase?: (phase: 'train' | 'evaluate' | 'save') => void;
  /** Stops training before the next update (state saved when `checkpointDir` is set). */
  readonly signal?: AbortSignal;
}

/** Defaults of the optional {@link PretrainSettings}. */
export const PRETRAIN_DEFAULTS = Object.freeze({
  steps: 500,
  batchSize: 16,
  seed: 1,
  lr: 5e-3,
  minLrRatio: 0.05,
  weightDecay: 0.01,
  clipNorm: 1,
  evalExamples: 32,
  evalSeed: 0,
  evalBatchSize: DEFAULT_BATCH_SIZE,
  probeExamples: 0,
  /** Updates between validation scores when `probeExamples` is set. */
  probeEvery: 100,
  /** Longest default LM window (the default is min(documentChars + 1, this)). */
  maxWindow: 512,
  /** Generation tasks: updates sorted by length together. */
  bucketSteps: 8,
});

/** Default warmup: a tenth of the run, at most 100 updates. */
export function defaultWarmupSteps(steps: number): number {
  return Math.min(100, Math.floor(steps / 10));
}

/**
 * Fills the defaults of `options` and checks every setting. The task is built once to check
 * its name and options.
 *
 * @returns the settings and the task they describe.
 * @throws LetheError `E_ARG` naming the setting (`steps`, `modelSize.hidden`, `window`, …);
 *   `task` for an unknown task name (listing the valid ones) and `taskOptions.<field>` for a
 *   bad task option.
 */
export function resolvePretrainSettings(options: PretrainOptions): {
  settings: PretrainSettings;
  task: Task;
} {
  const d = PRETRAIN_DEFAULTS;
  if (typeof options.task !== 'string' || options.task.length === 0) {
    throw new LetheError('E_ARG', 'must be a task name', 'task');
  }
  const taskOptions = options.taskOptions ?? {};
  if (!isPlainObject(taskOptions))
    throw new LetheError('E_ARG', 'must be an object', 'taskOptions');
  assertJson(taskOptions, 'taskOptions');
  let task: Task;
  try {
    task = createTask(options.task, taskOptions);
  } catch (error) {
    if (!(error instanceof LetheError)) throw error;
    throw withArgument(
      error,
      error.argument === 'name' ? 'task' : `taskOptions.${error.argument ?? ''}`,
    );
  }
  const steps = integer(options.steps ?? d.steps, 'steps', 1);
  const warmupSteps = integer(options.warmupSteps ?? defaultWarmupSteps(steps), 'warmupSteps', 0);
  if (warmupSteps >= steps) {
    throw new LetheError('E_ARG', `must be < steps (${steps}), got ${warmupSteps}`, 'warmupSteps');
  }
  let window: number | undefined;
  let bucketSteps: number | undefined;
  let lossOn: LossOn | undefined;
  if (task.kind === 'perplexity') {
    const documentChars = (task.options as { documentChars?: number }).documentChars ?? d.maxWindow;
    window = integer(options.window ?? Math.min(documentChars + 1, d.maxWindow), 'window', 2);
    if (options.bucketSteps !== undefined) {
      throw new LetheError('E_ARG', 'applies to generation tasks, not lm', 'bucketSteps');
    }
    if (options.lossOn !== undefined) {
      throw new LetheError(
        'E_ARG',
        'applies to generation tasks (lm trains on every token)',
        'lossOn',
      );
    }
  } else {
    if (options.window !== undefined) {
      throw new LetheError('E_ARG', `applies to the lm task only, not ${task.name}`, 'window');
    }
    bucketSteps = integer(options.bucketSteps ?? d.bucketSteps, 'bucketSteps', 1, 4096);
    lossOn = options.lossOn ?? 'completion';
    if (lossOn !== 'completion' && lossOn !== 'all') {
      throw new LetheError(
        'E_ARG',
        `must be "completion" or "all", got ${JSON.stringify(lossOn)}`,
        'lossOn',
      );
    }
  }
  const evalSeed = integer(options.evalSeed ?? d.evalSeed, 'evalSeed', 0);
  if (evalSeed >= TRAINING_SEED_OFFSET) {
    throw new LetheError(
      'E_ARG',
      `must be below ${TRAINING_SEED_OFFSET} (seeds from there on are training seeds), got ${evalSeed}`,
      'evalSeed',
    );
  }
  const probe = probeSettings(options, evalSeed, steps);
  if (typeof options.out !== 'string' || options.out.length === 0) {
    throw new LetheError('E_ARG', 'must be a directory path', 'out');
  }
  const init = initDirectory(options.init, options.out);
  const batchSize = integer(options.batchSize ?? d.batchSize, 'batchSize', 1);
  const microBatchSize =
    options.microBatchSize === undefined
      ? undefined
      : integer(options.microBatchSize, 'microBatchSize', 1, batchSize);
  const settings: PretrainSettings = {
    task: task.name,
    taskOptions: taskOptions as Record<string, JsonValue>,
    modelSize: resolveModelSize(options.modelSize),
    init,
    steps,
    batchSize,
    // A part of the whole batch is the batch itself: one pass, as without the setting.
    microBatchSize: microBatchSize === batchSize ? undefined : microBatchSize,
    seed: integer(
      options.seed ?? d.seed,
      'seed',
      0,
      Number.MAX_SAFE_INTEGER - TRAINING_SEED_OFFSET,
    ),
    lr: positive(options.lr ?? d.lr, 'lr'),
    warmupSteps,
    minLrRatio: fraction(options.minLrRatio ?? d.minLrRatio, 'minLrRatio'),
    weightDecay: nonNegative(options.weightDecay ?? d.weightDecay, 'weightDecay'),
    clipNorm: positive(options.clipNorm ?? d.clipNorm, 'clipNorm'),
    window,
    bucketSteps,
    lossOn,
    evalExamples: integer(options.evalExamples ?? d.evalExamples, 'evalExamples', 0),
    evalSeed,
    evalBatchSize: integer(options.evalBatchSize ?? d.evalBatchSize, 'evalBatchSize', 1),
    ...probe,
    out: options.out,
  };
  return { settings, task };
}

/** The validation probe's settings: its examples, seed (default `evalSeed + 1`) and cadence. */
function probeSettings(
  options: PretrainOptions,
  evalSeed: number,
  steps: number,
): Pick<PretrainSettings, 'probeExamples' | 'probeSeed' | 'probeEvery'> {
  const d = PRETRAIN_DEFAULTS;
  const probeExamples = integer(options.probeExamples ?? d.probeExamples, 'probeExamples', 0);
  const probeSeed = integer(options.probeSeed ?? evalSeed + 1, 'probeSeed', 0);
  if (probeSeed >= TRAINING_SEED_OFFSET || probeSeed === evalSeed) {
    throw new LetheError(
      'E_ARG',
      `must be below ${TRAINING_SEED_OFFSET} (seeds from there on are training seeds) and differ from evalSeed ${evalSeed}, got ${probeSeed}`,
      'probeSeed',
    );
  }
  if (probeExamples === 0) {
    if (options.probeEvery !== undefined) {
      throw new LetheError('E_ARG', 'needs probeExamples > 0', 'probeEvery');
    }
    return { probeExamples, probeSeed, probeEvery: undefined };
  }
  const probeEvery = integer(options.probeEvery ?? Math.min(d.probeEvery, steps), 'probeEvery', 1);
  return { probeExamples, probeSeed, probeEvery };
}

/**
 * Checks `init`: a directory path other than `out` (the run replaces `out`, so a model
 * fine-tuned in place could never be recreated by its recorded command).
 */
function initDirectory(init: string | undefined, out: string): string | undefined {
  if (init === undefined) return undefined;
  if (typeof init !== 'string' || init.length === 0) {
    throw new LetheError('E_ARG', 'must be a task-model directory path', 'init');
  }
  if (resolve(init) === resolve(out)) {
    throw new LetheError(
      'E_ARG',
      `must differ from out (${out}): the run replaces out, so its recorded command could not recreate it`,
      'init',
    );
  }
  return init;
}

function integer(
  value: number,
  argument: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (!(Number.isSafeInteger(value) && value >= min && value <= max)) {
    throw new LetheError('E_ARG', `must be an integer in [${min}, ${max}], got ${value}`, argument);
  }
  return value;
}

function positive(value: number, argument: string): number {
  if (!(Number.isFinite(value) && value > 0)) {
    throw new LetheError('E_ARG', `must be a finite number > 0, got ${value}`, argument);
  }
  return value;
}

function nonNegative(value: number, argument: string): number {
  if (!(Number.isFinite(value) && value >= 0)) {
    throw new LetheError('E_ARG', `must be a finite number ≥ 0, got ${value}`, argument);
  }
  return value;
}

function fraction(value: number, argument: string): number {
  if (!(Number.isFinite(value) && value >= 0 && value <= 1)) {
    throw new LetheError('E_ARG', `must be a number in [0, 1], got ${value}`, argument);
  }
  return value;
}
