import type { JsonValue } from '@lethe/eval';
import {
  crossEntropyLoss,
  type DecoderModel,
  isNormOrBias,
  type NextTokenBatch,
  nextTokenMicroBatches,
  SftTrainer,
  warmupCosineSchedule,
} from '@lethe/model';
import { directoryCheckpointStore, writeModelDirectory } from '@lethe/model/node';
import { activeBackend } from '@lethe/tensor';
import { generationBatches } from './generation-batches';
import { evaluateFullCache, heldOutPrompts } from './held-out-evaluation';
import { initialModel } from './initial-model';
import { lossCurve, withLoss } from './loss-curve';
import {
  TASK_MODEL_FILE,
  TASK_MODEL_FORMAT,
  TASK_MODEL_VERSION,
  type TaskModelEvaluation,
  type TaskModelLossCurve,
  type TaskModelManifest,
  type TaskModelProbe,
  type TaskModelProbes,
} from './manifest';
import { taskModelConfig } from './model-size';
import { pretrainCommand } from './pretrain-flags';
import {
  type PretrainOptions,
  type PretrainSettings,
  resolvePretrainSettings,
} from './pretrain-settings';
import type { TaskTokenizer } from './read-task-model-files';
import { textWindowBatches } from './text-window-batches';
import {
  readTrainingRecord,
  type TrainingRecord,
  withProbe,
  writeTrainingRecord,
} from './training-record';
import { trainingSeed } from './training-seed';
import { guardTrainingState } from './training-state-guard';

/** Default updates between writes of the resumable training state. */
export const DEFAULT_CHECKPOINT_EVERY = 50;

/** Outcome of {@link pretrainTaskModel}. */
export interface PretrainResult {
  /** The resolved settings of the run. */
  readonly settings: PretrainSettings;
  /** The trained model (the caller owns it: `dispose()` it when done). */
  readonly model: DecoderModel;
  readonly tokenizer: TaskTokenizer;
  /** Updates completed. */
  readonly step: number;
  /** True when `signal` stopped training: nothing was evaluated or saved. */
  readonly stopped: boolean;
  /** What was written to `lethe-model.json` (`undefined` when stopped). */
  readonly manifest: TaskModelManifest | undefined;
}

/**
 * Trains a tiny task model with the `SftTrainer` of `@lethe/model`, from scratch or from the
 * weights of another task model (`init`, see `initialModel`), and saves it
 * as a task-model directory (`config.json`, `model.safetensors`, `tokenizer.json`,
 * `lethe-model.json`; see `writeModelDirectory`, all or nothing).
 *
 * - Data: generation tasks train on (prompt + reference completion + EOS) of fresh examples of
 *   task seed `trainingSeed(seed)` in index order (sorted by length within groups of
 *   `bucketSteps` updates), loss on the completion only; the held-out
 *   prompts of the final evaluation are never trained on. The LM task trains on windows of
 *   `trainingText(trainingSeed(seed))`. The tokenizer is the task's own.
 * - Optimisation: AdamW (norm weights not decayed), warmup then cosine decay, gradient
 *   clipping; weights initialised from `seed`, or the weights of the task model in `init` (same
 *   architecture and tokenizer; recorded with its own command in `training.init`).
 * - Resumable: with `checkpointDir` the trainer's state is written every `checkpointEvery`
 *   updates and on `signal`; a later call with the same settings and directory continues and
 *   ends with bit-identical weights (a directory of a run with other settings is refused).
 * - Validation (`probeExamples` > 0): every `probeEvery` updates and after the last one, the
 *   full-cache score on examples `0 … probeExamples − 1` of `probeSeed` (kept out of training
 *   like the held-out ones; the training data and weights are those of a run without probes
 *   unless a validation prompt would have been trained on), passed to `onProbe` and recorded
 *   in `training.probes`. `training.trainingSeconds` records the time spent in updates over every
 *   session of the run and `training.lossCurve` the mean loss of each window of
 *   `LOSS_CURVE_EVERY` (50) updates (all are kept in `checkpointDir` between sessions).
 * - At the end the full-cache score on `evalExamples` held-out examples of `evalSeed` is
 *   computed exactly as `lethe eval` computes it and recorded, with that command and the
 *   `lethe pretrain` command that recreates the directory.
 *
 * @example
 * ```ts
 * await initBackend('wasm');
 * const { manifest, model } = await pretrainTaskModel({
 *   task: 'arithmetic', taskOptions: { steps: 3 }, steps: 400, out: 'models/arithmetic',
 * });
 * console.log(manifest?.evaluation?.mean, manifest?.command);
 * model.dispose();
 * ```
 * @throws LetheError the errors of `resolvePretrainSettings` (naming the setting) and of
 *   `initialModel` (naming `init`), `E_STATE`
 *   for a non-finite loss, `E_ARG` naming `checkpointDir` when it holds another run's state,
 *   `E_CHECKPOINT` / `E_FORMAT` for a training state that does not fit the run, `E_ARG` naming
 *   `out` when it exists and is not a model directory.
 */
export async function pretrainTaskModel(options: PretrainOptions): Promise<PretrainResult> {
  const { settings, task } = resolvePretrainSettings(options);
  const tokenizer = task.tokenizer as TaskTokenizer;
  const config = taskModelConfig(settings.modelSize, tokenizer.vocabSize);
  const dataSeed = trainingSeed(settings.seed);
  const batches =
    task.kind === 'generation'
      ? generationBatches(task, {
          seed: dataSeed,
          batchSize: settings.batchSize,
          bucketSteps: settings.bucketSteps,
          lossOn: settings.lossOn,
          exclude: new Set([
            ...heldOutPrompts(task, settings.evalSeed, settings.evalExamples),
            ...heldOutPrompts(task, settings.probeSeed, settings.probeExamples),
          ]),
        })
      : textWindowBatches(task, {
          seed: dataSeed,
          batchSize: settings.batchSize,
          window: settings.window!,
        });
  const { model, init } = await initialModel(settings, config, tokenizer);
  let finalLoss: number | null = null;
  let trainer: SftTrainer<NextTokenBatch> | undefined;
  try {
    if (options.checkpointDir !== undefined) {
      await guardTrainingState(options.checkpointDir, settings);
    }
    const record = await readTrainingRecord(options.checkpointDir);
    // Set when training starts; each update's time runs from the end of the one before.
    let clock = 0;
    const afterUpdate = async (step: number): Promise<void> => {
      record.trainingSeconds += (performance.now() - clock) / 1000;
      record.losses = withLoss(record.losses, step, finalLoss!);
      const every = settings.probeEvery;
      if (every !== undefined && (step % every === 0 || step === settings.steps)) {
        const probe = await probeModel(settings, model, step);
        record.probes = withProbe(record.probes, probe);
        options.onProbe?.(probe);
      }
      if (options.checkpointDir !== undefined) {
        await writeTrainingRecord(options.checkpointDir, record);
      }
      clock = performance.now();
    };
    trainer = new SftTrainer<NextTokenBatch>({
      model,
      loss: (b) => crossEntropyLoss(model.forward(b.inputs).logits, b.targets, b.mask),
      batches,
      ...(settings.microBatchSize === undefined
        ? {}
        : { microBatches: nextTokenMicroBatches(settings.microBatchSize) }),
      steps: settings.steps,
      seed: settings.seed,
      schedule: warmupCosineSchedule({
        peakLr: settings.lr,
        warmupSteps: settings.warmupSteps,
        totalSteps: settings.steps,
        minLrRatio: settings.minLrRatio,
      }),
      optimizer: { weightDecay: settings.weightDecay, excludeFromWeightDecay: isNormOrBias },
      clipNorm: settings.clipNorm,
      ...(options.checkpointDir === undefined
        ? {}
        : {
            checkpoint: directoryCheckpointStore(options.checkpointDir),
            checkpointEvery: options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY,
          }),
      signal: options.signal,
      onProgress: (progress) => {
        finalLoss = progress.loss;
        options.onProgress?.(progress);
      },
      afterUpdate,
    });
    options.onPhase?.('train');
    clock = performance.now();
    const run = await trainer.train();
    if (run.stopped) {
      return { settings, model, tokenizer, step: run.step, stopped: true, manifest: undefined };
    }
    const backend = activeBackend() ?? 'unknown';
    let evaluation: TaskModelEvaluation | null = null;
    if (settings.evalExamples > 0) {
      options.onPhase?.('evaluate');
      evaluation = await evaluateFullCache({
        task: settings.task,
        taskOptions: settings.taskOptions,
        model,
        checkpoint: settings.out,
        seed: settings.evalSeed,
        examples: settings.evalExamples,
        batchSize: settings.evalBatchSize,
        signal: options.signal,
      });
    }
    const manifest: TaskModelManifest = {
      format: TASK_MODEL_FORMAT,
      version: TASK_MODEL_VERSION,
      task: {
        name: settings.task,
        options: settings.taskOptions,
        resolved: task.options as Record<string, JsonValue>,
      },
      model: {
        ...settings.modelSize,
        vocabSize: config.vocab_size,
        parameters: [...model.parameters.values()].reduce((sum, v) => sum + v.size, 0),
      },
      training: {
        seed: settings.seed,
        trainingSeed: dataSeed,
        steps: settings.steps,
        batchSize: settings.batchSize,
        ...(settings.microBatchSize === undefined
          ? {}
          : { microBatchSize: settings.microBatchSize }),
        lr: settings.lr,
        warmupSteps: settings.warmupSteps,
        minLrRatio: settings.minLrRatio,
        weightDecay: settings.weightDecay,
        clipNorm: settings.clipNorm,
        ...(settings.window === undefined ? {} : { window: settings.window }),
        ...(settings.bucketSteps === undefined ? {} : { bucketSteps: settings.bucketSteps }),
        ...(settings.lossOn === 'all' ? { lossOn: settings.lossOn } : {}),
        ...(init === undefined ? {} : { init }),
        backend,
        finalLoss,
        ...probesOf(settings, record),
        ...lossCurveOf(record),
        trainingSeconds: Math.round(record.trainingSeconds * 10) / 10,
      },
      command: pretrainCommand(settings, backend),
      evaluation,
    };
    options.onPhase?.('save');
    await writeModelDirectory(settings.out, {
      model,
      tokenizer,
      json: { [TASK_MODEL_FILE]: manifest },
    });
    return { settings, model, tokenizer, step: run.step, stopped: false, manifest };
  } catch (error) {
    model.dispose();
    throw error;
  } finally {
    trainer?.dispose();
  }
}

/** The full-cache score of `model` on the run's validation examples after `step` updates. */
async function probeModel(
  settings: PretrainSettings,
  model: DecoderModel,
  step: number,
): Promise<TaskModelProbe> {
  const score = await evaluateFullCache({
    task: settings.task,
    taskOptions: settings.taskOptions,
    model,
    checkpoint: settings.out,
    seed: settings.probeSeed,
    examples: settings.probeExamples,
    batchSize: settings.evalBatchSize,
  });
  return {
    step,
    metric: score.metric,
    mean: score.mean,
    stderr: score.stderr,
    n: score.n,
    ...(score.members === undefined ? {} : { members: score.members }),
  };
}

/** The manifest's `training.lossCurve`, when every update's loss was recorded. */
function lossCurveOf(record: TrainingRecord): { lossCurve?: TaskModelLossCurve } {
  const curve = lossCurve(record.losses);
  return curve === undefined ? {} : { lossCurve: curve };
}

/** The manifest's `training.probes`, when the run probed. */
function probesOf(
  settings: PretrainSettings,
  record: TrainingRecord,
): { probes?: TaskModelProbes } {
  if (settings.probeEvery === undefined) return {};
  return {
    probes: {
      seed: settings.probeSeed,
      examples: settings.probeExamples,
      every: settings.probeEvery,
      scores: record.probes,
    },
  };
}
