import { LetheError } from '@lethe/core';
import { isPlainObject, type JsonValue } from '@lethe/eval';
import type { ModelWidths } from '@lethe/model';
import type { ModelSize } from './model-size';

/** The file describing a task model, beside its weights, config and tokenizer. */
export const TASK_MODEL_FILE = 'lethe-model.json';
/** `format` field of {@link TASK_MODEL_FILE}. */
export const TASK_MODEL_FORMAT = 'lethe-task-model';
/** `version` field of {@link TASK_MODEL_FILE} that this package writes and reads. */
export const TASK_MODEL_VERSION = 1;

/** The full-cache score a task model reached on held-out examples when it was saved. */
export interface TaskModelEvaluation {
  /** Always `full`: no eviction. */
  readonly policy: 'full';
  /** Evaluation seed (examples `0 … examples − 1` of it; never a training seed). */
  readonly seed: number;
  readonly examples: number;
  readonly batchSize: number;
  /** `accuracy` (generation tasks, a fraction) or `perplexity` (LM). */
  readonly metric: 'accuracy' | 'perplexity';
  /** Mean ± standard error over the `n` examples. */
  readonly mean: number;
  readonly stderr: number;
  readonly n: number;
  /** The `lethe eval …` command that recomputes this score from the saved directory. */
  readonly command: string;
  /**
   * For a task whose examples name a suite member (the `suite` mixture): the examples of each
   * member solved, and its examples, in member order; absent otherwise.
   */
  readonly members?: Readonly<Record<string, { readonly correct: number; readonly total: number }>>;
}

/** One validation score taken while training (`lethe pretrain --probe-examples`). */
export interface TaskModelProbe {
  /** Updates completed when it was taken. */
  readonly step: number;
  /** `accuracy` or `perplexity`, as the held-out evaluation's. */
  readonly metric: 'accuracy' | 'perplexity';
  readonly mean: number;
  readonly stderr: number;
  readonly n: number;
  /** Per suite member, as in {@link TaskModelEvaluation}. */
  readonly members?: Readonly<Record<string, { readonly correct: number; readonly total: number }>>;
}

/** The validation probes of a run: where their examples came from, and each score. */
export interface TaskModelProbes {
  /** Examples `0 … examples − 1` of `seed` (kept out of training). */
  readonly seed: number;
  readonly examples: number;
  /** Updates between two probes (and one after the last update). */
  readonly every: number;
  /** In step order. */
  readonly scores: readonly TaskModelProbe[];
}

/**
 * How a run's training loss fell: the mean of each update's batch loss (taken before the update)
 * over updates `1 … every`, `every + 1 … 2·every`, …, the last window possibly shorter.
 */
export interface TaskModelLossCurve {
  readonly every: number;
  readonly means: readonly number[];
}

/**
 * The task model a run started from (`lethe pretrain --init`) instead of random weights: its
 * directory as given and the command that recreated it, with its own start when it was
 * fine-tuned too, so the whole chain of runs can be replayed.
 */
export interface TaskModelInit {
  /** The directory as given to `--init`. */
  readonly dir: string;
  /** The `lethe pretrain …` command recorded in its `lethe-model.json`. */
  readonly command: string;
  /**
   * Layers the run added on top of it, each starting as the identity (`addLayers`); absent
   * when the run kept its depth.
   */
  readonly addedLayers?: number;
  /**
   * Its widths when the run widened it (`widenModel`: more residual channels, heads or MLP
   * units, the model's function kept); absent when the run kept its widths.
   */
  readonly widenedFrom?: ModelWidths;
  /** Where that model started from, when it was fine-tuned itself. */
  readonly init?: TaskModelInit;
}

/** How the model was trained (every setting that affects the weights). */
export interface TaskModelTraining {
  /** Pretraining seed (batch order, and the initial weights of a random start). */
  readonly seed: number;
  /** Task seed of the training examples (`trainingSeed(seed)`). */
  readonly trainingSeed: number;
  readonly steps: number;
  readonly batchSize: number;
  /** Sequences per forward and backward pass when each update's batch was cut into parts. */
  readonly microBatchSize?: number;
  /** Peak learning rate of the warmup-cosine schedule. */
  readonly lr: number;
  readonly warmupSteps: number;
  readonly minLrRatio: number;
  readonly weightDecay: number;
  readonly clipNorm: number;
  /** LM only: tokens per training window. */
  readonly window?: number;
  /** Generation tasks only: updates sorted by length together. */
  readonly bucketSteps?: number;
  /** `all` when the loss fell on the prompt too (absent: the completion only). */
  readonly lossOn?: 'all';
  /** The task model whose weights the run started from; absent for a random start. */
  readonly init?: TaskModelInit;
  /** tfjs backend the weights were computed on. */
  readonly backend: string;
  /** Loss of the last update (`null` when a resumed run had no update left to make). */
  readonly finalLoss: number | null;
  /** The validation scores taken while training; absent without probes. */
  readonly probes?: TaskModelProbes;
  /**
   * The loss curve over every session of the run; absent in older files and for a run resumed
   * from a state that did not record each update's loss.
   */
  readonly lossCurve?: TaskModelLossCurve;
  /** Wall-clock seconds of training over every session of the run; absent in older files. */
  readonly trainingSeconds?: number;
}

/** Contents of {@link TASK_MODEL_FILE}. */
export interface TaskModelManifest {
  readonly format: typeof TASK_MODEL_FORMAT;
  readonly version: typeof TASK_MODEL_VERSION;
  readonly task: {
    readonly name: string;
    /** Options as given to `createTask` (and to `lethe eval --task-options`). */
    readonly options: Readonly<Record<string, JsonValue>>;
    /** The same options with every default filled in. */
    readonly resolved: Readonly<Record<string, JsonValue>>;
  };
  readonly model: ModelSize & { readonly vocabSize: number; readonly parameters: number };
  readonly training: TaskModelTraining;
  /** The `lethe pretrain …` command that recreates this directory. */
  readonly command: string;
  /** Held-out full-cache score, or `null` when the run evaluated nothing. */
  readonly evaluation: TaskModelEvaluation | null;
}

/**
 * Checks a parsed {@link TASK_MODEL_FILE}: format, version and every field's type.
 *
 * @param source - the file named in errors.
 * @throws LetheError `E_FORMAT` naming `source`, with the offending field in the message.
 */
export function parseTaskModelManifest(json: unknown, source: string): TaskModelManifest {
  const fail = (field: string, problem: string): never => {
    throw new LetheError('E_FORMAT', `field "${field}" ${problem}`, source);
  };
  if (!isPlainObject(json)) throw new LetheError('E_FORMAT', 'is not a JSON object', source);
  if (json.format !== TASK_MODEL_FORMAT) {
    fail('format', `is ${JSON.stringify(json.format)}, expected "${TASK_MODEL_FORMAT}"`);
  }
  if (json.version !== TASK_MODEL_VERSION) {
    fail(
      'version',
      `is ${JSON.stringify(json.version)}; this package reads version ${TASK_MODEL_VERSION} (re-run the command in the file with this version)`,
    );
  }
  const object = (value: unknown, field: string): Record<string, unknown> =>
    isPlainObject(value) ? value : fail(field, 'must be an object');
  const number = (value: unknown, field: string): number =>
    typeof value === 'number' && Number.isFinite(value) ? value : fail(field, 'must be a number');
  const count = (value: unknown, field: string, min = 1): number =>
    Number.isSafeInteger(value) && (value as number) >= min
      ? (value as number)
      : fail(field, `must be an integer ≥ ${min}`);
  const text = (value: unknown, field: string): string =>
    typeof value === 'string' && value.length > 0
      ? value
      : fail(field, 'must be a non-empty string');

  const task = object(json.task, 'task');
  text(task.name, 'task.name');
  object(task.options, 'task.options');
  object(task.resolved, 'task.resolved');
  const model = object(json.model, 'model');
  for (const key of [
    'hidden',
    'layers',
    'heads',
    'kvHeads',
    'intermediate',
    'vocabSize',
    'parameters',
  ]) {
    count(model[key], `model.${key}`);
  }
  const training = object(json.training, 'training');
  count(training.seed, 'training.seed', 0);
  count(training.trainingSeed, 'training.trainingSeed', 0);
  count(training.steps, 'training.steps');
  count(training.batchSize, 'training.batchSize');
  count(training.warmupSteps, 'training.warmupSteps', 0);
  for (const key of ['lr', 'minLrRatio', 'weightDecay', 'clipNorm']) {
    number(training[key], `training.${key}`);
  }
  if (training.window !== undefined) count(training.window, 'training.window', 2);
  if (training.bucketSteps !== undefined) count(training.bucketSteps, 'training.bucketSteps');
  if (training.microBatchSize !== undefined) {
    count(training.microBatchSize, 'training.microBatchSize');
    if ((training.microBatchSize as number) >= (training.batchSize as number)) {
      fail('training.microBatchSize', 'must be below training.batchSize when present');
    }
  }
  if (training.lossOn !== undefined && training.lossOn !== 'all') {
    fail('training.lossOn', 'must be "all" when present');
  }
  for (let init = training.init, field = 'training.init'; init !== undefined; ) {
    const start = object(init, field);
    text(start.dir, `${field}.dir`);
    text(start.command, `${field}.command`);
    if (start.addedLayers !== undefined) count(start.addedLayers, `${field}.addedLayers`);
    if (start.widenedFrom !== undefined) {
      const widths = object(start.widenedFrom, `${field}.widenedFrom`);
      for (const key of ['hidden', 'heads', 'kvHeads', 'intermediate']) {
        count(widths[key], `${field}.widenedFrom.${key}`);
      }
    }
    init = start.init;
    field = `${field}.init`;
  }
  text(training.backend, 'training.backend');
  if (training.finalLoss !== null) number(training.finalLoss, 'training.finalLoss');
  if (training.trainingSeconds !== undefined) {
    if (number(training.trainingSeconds, 'training.trainingSeconds') < 0) {
      fail('training.trainingSeconds', 'must be ≥ 0');
    }
  }
  if (training.lossCurve !== undefined) {
    const curve = object(training.lossCurve, 'training.lossCurve');
    const every = count(curve.every, 'training.lossCurve.every');
    if (!Array.isArray(curve.means)) fail('training.lossCurve.means', 'must be an array');
    const means = curve.means as unknown[];
    means.forEach((mean, i) => number(mean, `training.lossCurve.means[${i}]`));
    if (means.length !== Math.ceil((training.steps as number) / every)) {
      fail('training.lossCurve.means', 'must hold one mean per window of every updates');
    }
  }
  const tallies = (value: unknown, field: string): void => {
    for (const [member, tally] of Object.entries(object(value, field))) {
      const { correct, total } = object(tally, `${field}.${member}`);
      if (
        count(correct, `${field}.${member}.correct`, 0) > count(total, `${field}.${member}.total`)
      ) {
        fail(`${field}.${member}.correct`, 'must be ≤ total');
      }
    }
  };
  const metric = (value: unknown, field: string): void => {
    if (value !== 'accuracy' && value !== 'perplexity') {
      fail(field, 'must be "accuracy" or "perplexity"');
    }
  };
  if (training.probes !== undefined) {
    const probes = object(training.probes, 'training.probes');
    count(probes.seed, 'training.probes.seed', 0);
    count(probes.examples, 'training.probes.examples');
    count(probes.every, 'training.probes.every');
    if (!Array.isArray(probes.scores)) fail('training.probes.scores', 'must be an array');
    let last = 0;
    (probes.scores as unknown[]).forEach((entry, i) => {
      const field = `training.probes.scores[${i}]`;
      const score = object(entry, field);
      if (count(score.step, `${field}.step`) <= last) fail(`${field}.step`, 'must increase');
      last = score.step as number;
      metric(score.metric, `${field}.metric`);
      number(score.mean, `${field}.mean`);
      number(score.stderr, `${field}.stderr`);
      count(score.n, `${field}.n`);
      if (score.members !== undefined) tallies(score.members, `${field}.members`);
    });
  }
  text(json.command, 'command');
  if (json.evaluation !== null) {
    const evaluation = object(json.evaluation, 'evaluation');
    if (evaluation.policy !== 'full') fail('evaluation.policy', 'must be "full"');
    count(evaluation.seed, 'evaluation.seed', 0);
    count(evaluation.examples, 'evaluation.examples');
    count(evaluation.batchSize, 'evaluation.batchSize');
    metric(evaluation.metric, 'evaluation.metric');
    number(evaluation.mean, 'evaluation.mean');
    number(evaluation.stderr, 'evaluation.stderr');
    count(evaluation.n, 'evaluation.n');
    text(evaluation.command, 'evaluation.command');
    if (evaluation.members !== undefined) tallies(evaluation.members, 'evaluation.members');
  }
  return json as unknown as TaskModelManifest;
}
