import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { guardRunSettings, loadTaskModel } from '@lethe/eval/node';
import { directoryCheckpointStore, writeFileAtomic } from '@lethe/model/node';
import { controllerConfig, initControllerParameters } from '@lethe/policies-sol';
import { longestPrefix, type SolProgress, SolTrainer } from '@lethe/policies-sol/train';
import { writeSolPolicyDirectory } from '@lethe/policies-sol/train/node';
import { actionSetNamed } from './action-sets';
import type { SolRunSettings } from './run-settings';
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
}

/**
 * Trains a SOL controller on the frozen language model of `settings.model` in `out`: GRPO on
 * teacher-forced counterfactual schedules over windows of the task's training text
 * (`SolTrainer`), checkpointed in `out/checkpoint/` and resumed by the same call; when complete,
 * writes `out/policy/` (the registry's `sol` policy directory, recording the horizon) and
 * `out/training.json` (the settings and the last progress report).
 *
 * @throws LetheError as `guardRunSettings` (a directory of another run), `loadTaskModel`, the
 *   action set's name, `trainingWindows` and `SolTrainer`.
 */
export async function trainSol(
  out: string,
  settings: SolRunSettings,
  options: TrainSolOptions = {},
): Promise<TrainSolResult> {
  await mkdir(out, { recursive: true });
  await guardRunSettings(out, { ...settings }, { extendable: ['updates'] });
  const actions = actionSetNamed(settings.actions);
  const taskModel = await loadTaskModel(settings.model);
  const { model } = taskModel;
  let last: SolProgress | undefined;
  try {
    const documents = trainingWindows(
      taskModel,
      settings.seed,
      longestPrefix(settings.prefix) + settings.horizon + 1,
    );
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
      prefix: settings.prefix,
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
    });
    try {
      const result = await trainer.train();
      if (result.stopped) return { stopped: true, ...(last === undefined ? {} : { last }) };
      const policyDir = join(out, 'policy');
      await writeSolPolicyDirectory(
        policyDir,
        {
          parameters: trainer.exportParameters(),
          actions,
          baseModel: { hiddenSize: model.config.hidden_size, vocabSize: model.config.vocab_size },
        },
        { horizon: settings.horizon },
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
