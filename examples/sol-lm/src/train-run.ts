import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { guardRunSettings } from '@lethe/eval/node';
import { modelIdentity } from '@lethe/model';
import { directoryCheckpointStore, writeFileAtomic, writePolicyDirectory } from '@lethe/model/node';
import { controllerConfig, initControllerParameters, solPolicyContents } from '@lethe/policies-sol';
import {
  longestPrefix,
  type SolProgress,
  SolTrainer,
  type TrainingDocument,
} from '@lethe/policies-sol/train';
import { queueSolRollouts } from '@lethe/policies-sol/train/node';
import { loadTaskBackbone, type TaskModel } from '@lethe/task-models/node';
import { actionSetNamed } from './action-sets';
import { answerDocuments } from './answer-documents';
import { DEFAULT_PREFIX, resolveRunSettings, type SolRunSettings } from './run-settings';
import { trainingWindows } from './training-windows';

/** How a {@link trainSol} call ended. */
export interface TrainSolResult {
  /** True when `signal` stopped it (the checkpoint holds the state; rerun to resume). */
  readonly stopped: boolean;
  /** The last progress report of this call, if it made an update. */
  readonly last?: SolProgress;
  /** The policy directory, written when the run is complete. */
  readonly policyDir?: string;
}

/** Options of {@link trainSol}. */
export interface TrainSolOptions {
  readonly onProgress?: (progress: SolProgress) => void;
  readonly signal?: AbortSignal;
  /** Checkpoint every this many updates (default 10). */
  readonly checkpointEvery?: number;
  /** Told what the training documents are, once they are ready (a generation task's take a while). */
  readonly onDocuments?: (summary: string) => void;
  /**
   * A Redis server (`redis://host:port`) whose `lethe worker` processes run each update's
   * schedules instead of this thread (`queueSolRollouts`), reading the frozen model where this
   * process read it (`settings.weights`, else `settings.model`): start them in this process's
   * working directory. The results do not depend on it.
   */
  readonly redis?: string;
  /** Hears each refusal a queue worker wrote (its packages or the model's files differ). */
  readonly onRefused?: (message: string) => void;
}

/**
 * Trains a SOL controller on the frozen model of `settings.model` (with the weights of
 * `settings.weights` when set) in `out`: GRPO on teacher-forced counterfactual schedules
 * (`SolTrainer`) over windows of the task's training text for a language model, or over the
 * model's own answers to training prompts for a generation task (`answerDocuments`),
 * checkpointed in `out/checkpoint/` and resumed by the same call; when complete, writes
 * `out/policy/` (the registry's `sol` policy directory, recording the horizon) and
 * `out/training.json` (the settings and the last progress report). With `options.redis`, each
 * update's schedules run on `lethe worker` processes, with the same results.
 *
 * @throws LetheError as `loadTaskBackbone`, `resolveRunSettings`, `guardRunSettings` (a
 *   directory of another run), the action set's name, `trainingWindows`, `answerDocuments` and
 *   `SolTrainer`.
 */
export async function trainSol(
  out: string,
  requested: SolRunSettings,
  options: TrainSolOptions = {},
): Promise<TrainSolResult> {
  const actions = actionSetNamed(requested.actions);
  const taskModel = await loadTaskBackbone(requested.model, requested.weights);
  const { model } = taskModel;
  let last: SolProgress | undefined;
  try {
    const settings = resolveRunSettings(requested, taskModel.task.kind);
    await mkdir(out, { recursive: true });
    await guardRunSettings(out, { ...settings }, { extendable: ['updates'] });
    const documents = await trainingDocuments(taskModel, settings, options.onDocuments);
    const trainer = new SolTrainer({
      model,
      actions,
      controller: initControllerParameters(
        controllerConfig({
          inputSize: model.config.hidden_size,
          actions: actions.size,
          width: settings.width,
        }),
        { seed: settings.seed },
      ),
      documents,
      updates: settings.updates,
      // A generation task's documents carry their own prefixes.
      ...(settings.prefix === undefined ? {} : { prefix: settings.prefix }),
      horizon: settings.horizon,
      batchSize: settings.batchSize,
      groupSize: settings.groupSize,
      lr: settings.lr,
      penaltyWeights: settings.penaltyWeights,
      seed: settings.seed,
      checkpoint: directoryCheckpointStore(join(out, 'checkpoint')),
      checkpointEvery: options.checkpointEvery ?? 10,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      onProgress: (progress) => {
        last = progress;
        options.onProgress?.(progress);
      },
      ...(options.redis === undefined
        ? {}
        : {
            rollouts: queueSolRollouts(model, requested.weights ?? requested.model, {
              redis: options.redis,
              ...(options.onRefused === undefined ? {} : { onRefused: options.onRefused }),
            }),
          }),
    });
    try {
      const result = await trainer.train();
      if (result.stopped) return { stopped: true, ...(last === undefined ? {} : { last }) };
      const policyDir = join(out, 'policy');
      await writePolicyDirectory(
        policyDir,
        solPolicyContents(
          {
            parameters: trainer.exportParameters(),
            actions,
            baseModel: { hiddenSize: model.config.hidden_size, vocabSize: model.config.vocab_size },
          },
          { options: { horizon: settings.horizon }, baseModel: await modelIdentity(model) },
        ),
      );
      await writeFileAtomic(
        join(out, 'training.json'),
        `${JSON.stringify({ settings, trainer: trainer.settings, last }, null, 2)}\n`,
      );
      return { stopped: false, ...(last === undefined ? {} : { last }), policyDir };
    } finally {
      trainer.dispose();
    }
  } finally {
    model.dispose();
  }
}

/** Windows of a language model's training text, or a generation task's answered prompts. */
async function trainingDocuments(
  taskModel: TaskModel,
  settings: SolRunSettings,
  tell: ((summary: string) => void) | undefined,
): Promise<TrainingDocument[]> {
  if (settings.answers === undefined) {
    const prefix = settings.prefix ?? DEFAULT_PREFIX;
    const windows = trainingWindows(
      taskModel,
      settings.seed,
      longestPrefix(prefix) + settings.horizon + 1,
    );
    tell?.(`${windows.length} windows of the training text`);
    return windows;
  }
  const started = performance.now();
  const answered = await answerDocuments(
    taskModel,
    settings.seed,
    settings.answers,
    settings.horizon,
  );
  tell?.(
    `${answered.documents.length} training prompts with the model's greedy answers (${answered.tooShort} answers too short for an episode, ${answered.heldOut} held-out prompts skipped; ${((performance.now() - started) / 1000).toFixed(0)} s)`,
  );
  return answered.documents;
}
