import type { JsonValue } from '@lethe/eval';
import {
  crossEntropyLoss,
  type DecoderModel,
  isNormOrBias,
  type NextTokenBatch,
  SftTrainer,
  warmupCosineSchedule,
} from '@lethe/model';
import { directoryCheckpointStore, writeModelDirectory } from '@lethe/model/node';
import { activeBackend } from '@lethe/tensor';
import { generationBatches } from './generation-batches';
import { evaluateFullCache, heldOutPrompts } from './held-out-evaluation';
import { initialModel } from './initial-model';
import {
  TASK_MODEL_FILE,
  TASK_MODEL_FORMAT,
  TASK_MODEL_VERSION,
  type TaskModelEvaluation,
  type TaskModelManifest,
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
          exclude: heldOutPrompts(task, settings.evalSeed, settings.evalExamples),
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
    trainer = new SftTrainer<NextTokenBatch>({
      model,
      loss: (b) => crossEntropyLoss(model.forward(b.inputs).logits, b.targets, b.mask),
      batches,
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
    });
    options.onPhase?.('train');
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
        lr: settings.lr,
        warmupSteps: settings.warmupSteps,
        minLrRatio: settings.minLrRatio,
        weightDecay: settings.weightDecay,
        clipNorm: settings.clipNorm,
        ...(settings.window === undefined ? {} : { window: settings.window }),
        ...(settings.bucketSteps === undefined ? {} : { bucketSteps: settings.bucketSteps }),
        ...(init === undefined ? {} : { init }),
        backend,
        finalLoss,
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
