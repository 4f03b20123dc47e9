import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { assertInteger, LetheError, withArgument } from '@lethe/core';
import type { GenerationTask, TaskExample } from '@lethe/eval';
import { POLICY_MANIFEST } from '@lethe/kv-cache';
import { type DecoderModel, resizeVocabulary } from '@lethe/model';
import { directoryCheckpointStore, writeModelDirectory } from '@lethe/model/node';
import type { TagForm } from '@lethe/policies-ngc';
import {
  interoceptionTokenizer,
  type NgcProgress,
  NgcTrainer,
  type NgcTrainResult,
} from '@lethe/policies-ngc/train';
import { queueRollouts, workerPoolRollouts } from '@lethe/policies-ngc/train/node';
import type { TaskTokenizer } from '@lethe/task-models';
import { loadTaskModel, type TaskModel } from '@lethe/task-models/node';
import { countdownNgcTask } from './countdown-ngc-task';
import { countdownTaskOf } from './countdown-task';
import { loadRunStart, type RunStart } from './init-from-run';
import { NGC_RUN_FILE } from './run-file';
import { writeRunPolicy } from './run-policy';
import { taskSftWarmup } from './task-sft-warmup';
import type { TrainSettings } from './train-settings';

/** Checkpoint file inside `<out>.state/`. */
export const NGC_STATE_FILE = 'ngc-checkpoint.safetensors';

/** What {@link trainRun} needs besides the settings. */
export interface TrainRunOptions {
  /** Output model directory; the resumable state lives in `<out>.state/`. */
  readonly out: string;
  /** The command line that reproduces the run, recorded in {@link NGC_RUN_FILE}. */
  readonly command: string;
  /**
   * Threads that generate the rollouts (default 1: this thread); from 2 on, a worker pool
   * (`workerPoolRollouts`). The results do not depend on it.
   */
  readonly threads?: number;
  /**
   * A Redis server (`redis://host:port`) whose `lethe worker` processes generate the rollouts
   * instead (`queueRollouts`), each update's weights written to `<out>.state/weights/` for them to
   * read: start the workers in this process's working directory. The results do not depend on it.
   */
  readonly redis?: string;
  readonly onProgress?: (progress: NgcProgress) => void;
  /** Called after each update of the supervised warm-up. */
  readonly onWarmupProgress?: (step: number, loss: number) => void;
  /** Stops RL before its next update (after a checkpoint); the short warm-up runs to its end. */
  readonly signal?: AbortSignal;
}

/**
 * Trains a Countdown model with NGC (or an ablation) from `settings`, checkpointing to
 * `<out>.state/` (a rerun of the same command resumes), and writes the trained model directory
 * `<out>` (weights, config, tokenizer, {@link NGC_RUN_FILE} with the settings, command and the
 * per-step history, and the `policy.json` through which the harness evaluates it with NGC, see
 * `writeRunPolicy`) when the run completes. With `settings.sftWarmupSteps` the model first gets
 * that supervised warm-up (`taskSftWarmup`), skipped when resuming (the RL checkpoint holds the
 * weights).
 *
 * The task is `countdownTaskOf` the model: Countdown for a Countdown model, the verbose Countdown
 * member for a model of the suite (its byte-level BPE writes the interoception tag as text, so
 * only the `characters` tag form applies).
 *
 * With `settings.init` it starts from that finished run's weights instead (`loadRunStart`).
 *
 * @throws LetheError `E_ARG` naming `threads` when it is not an integer ≥ 1, `model` for a task
 *   model of another task, `tagTokens` for the markup tag with a subword tokenizer, `init` for a
 *   run that cannot be continued (see `loadRunStart`).
 */
export async function trainRun(
  settings: TrainSettings,
  options: TrainRunOptions,
): Promise<NgcTrainResult> {
  const threads = assertInteger(options.threads ?? 1, 'threads', 1);
  if (options.redis !== undefined && threads > 1) {
    throw new LetheError(
      'E_ARG',
      'is given with a Redis queue: its workers generate the rollouts',
      'threads',
    );
  }
  const base = await loadTaskModel(settings.model);
  let countdown: GenerationTask;
  let start: RunStart;
  try {
    countdown = countdownTaskOf(base);
    start = await startingPoint(settings, base);
  } catch (error) {
    base.model.dispose();
    throw error;
  }
  const { model, tokenizer } = start;
  if (model !== base.model) base.model.dispose();
  const task = countdownNgcTask(
    countdown,
    settings.seed,
    settings.promptsPerStep,
    settings.interoception ? tokenizer : undefined,
  );
  const statePath = join(`${options.out}.state`, NGC_STATE_FILE);
  if (!existsSync(statePath)) {
    await taskSftWarmup({
      model,
      task: countdown,
      steps: settings.sftWarmupSteps,
      seed: settings.seed,
      ...(settings.interoception
        ? { interoception: { tokenizer, rates: settings.retention.map((r) => 1 - r) } }
        : {}),
      onProgress: options.onWarmupProgress,
    });
  }
  const ngc = {
    cadence: settings.cadence,
    blockSize: settings.blockSize,
    window: settings.window,
    logits: settings.logits,
  };
  const rolloutSettings = {
    ngc,
    maxNewTokens: settings.maxNewTokens,
    temperature: settings.temperature,
    stop: task.stop,
    seed: settings.seed,
  };
  const pool =
    options.redis !== undefined
      ? Object.assign(
          queueRollouts(model, rolloutSettings, {
            redis: options.redis,
            weightsDir: join(`${options.out}.state`, 'weights'),
            onRefused: (message) => process.stderr.write(`\nwarning: ${message}\n`),
          }),
          { close: async () => undefined },
        )
      : threads === 1
        ? undefined
        : workerPoolRollouts(model, rolloutSettings, { threads });
  let trainer: NgcTrainer<TaskExample> | undefined;
  try {
    trainer = new NgcTrainer({
      model,
      task,
      variant: settings.variant,
      steps: settings.steps,
      promptsPerStep: settings.promptsPerStep,
      groupSize: settings.groupSize,
      curriculum: {
        retention: settings.retention,
        stageSteps: settings.stageSteps,
        blend: settings.blend,
      },
      ngc,
      temperature: settings.temperature,
      maxNewTokens: settings.maxNewTokens,
      lr: settings.lr,
      adam: {
        beta1: settings.beta1,
        beta2: settings.beta2,
        epsilon: settings.adamEpsilon,
        weightDecay: settings.weightDecay,
      },
      clipNorm: settings.clipNorm,
      microBatch: settings.microBatch,
      minLengthPenalty: settings.minLengthPenalty,
      seed: settings.seed,
      checkpoint: directoryCheckpointStore(`${options.out}.state`, NGC_STATE_FILE),
      checkpointEvery: settings.checkpointEvery,
      rollouts: pool,
      onProgress: options.onProgress,
      signal: options.signal,
    });
    const result = await trainer.train();
    if (!result.stopped) {
      await writeRun(options.out, settings, model, tokenizer, {
        format: 'lethe-ngc-run',
        version: 1,
        baseModel: base.manifest,
        task: { name: countdown.name, options: countdown.options },
        settings,
        command: options.command,
        history: result.history,
      });
    }
    return result;
  } finally {
    trainer?.dispose();
    await pool?.close();
    model.dispose();
  }
}

/**
 * Writes the finished run `out`: its model directory with `record` as {@link NGC_RUN_FILE}, then
 * its policy manifest (`writeRunPolicy`, the identity of `model` as its base model). A rerun of a
 * finished run writes it again: `writeModelDirectory` replaces only a directory of the files it
 * writes, so the earlier manifest goes first.
 */
async function writeRun(
  out: string,
  settings: TrainSettings,
  model: DecoderModel,
  tokenizer: TaskTokenizer,
  record: Readonly<Record<string, unknown>>,
): Promise<void> {
  if (existsSync(join(out, NGC_RUN_FILE))) await rm(join(out, POLICY_MANIFEST), { force: true });
  await writeModelDirectory(out, { model, tokenizer, json: { [NGC_RUN_FILE]: record } });
  await writeRunPolicy(out, settings, model);
}

/**
 * The weights and tokenizer a run starts from: the trained model of `settings.init` when set,
 * else the task model (`base.model` itself, or, with interoception and a character tokenizer, a
 * copy with the vocabulary extended for the tag).
 */
async function startingPoint(settings: TrainSettings, base: TaskModel): Promise<RunStart> {
  if (settings.init !== undefined) {
    return loadRunStart(settings.init, base, settings);
  }
  if (!settings.interoception) return { model: base.model, tokenizer: base.tokenizer };
  const tokenizer = tagReadingTokenizer(base.tokenizer, settings.tagTokens);
  return tokenizer.vocabSize === base.tokenizer.vocabSize
    ? { model: base.model, tokenizer }
    : { model: resizeVocabulary(base.model, tokenizer.vocabSize), tokenizer };
}

/**
 * `interoceptionTokenizer` of the task model's tokenizer, its errors naming the settings: the
 * tag's form (`tagTokens`), or the model whose tokenizer cannot write the tag (`model`).
 */
function tagReadingTokenizer(tokenizer: TaskTokenizer, form: TagForm): TaskTokenizer {
  try {
    return interoceptionTokenizer(tokenizer, form);
  } catch (error) {
    if (!(error instanceof LetheError)) throw error;
    throw withArgument(error, error.argument === 'form' ? 'tagTokens' : 'model');
  }
}
