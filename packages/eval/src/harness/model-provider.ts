import { DecoderModel } from '@lethe/model';
import { loadCheckpoint } from '@lethe/model/node';
import { LetheError } from '@lethe/tensor';

/**
 * Where the model of each task comes from. A sweep asks for a task's model once, before its
 * first cell that still has to run, and releases it after the task's last cell (or when the
 * sweep stops early).
 */
export interface ModelProvider {
  /** The model for task `task`. */
  load(task: string): DecoderModel | Promise<DecoderModel>;
  /** Called when the sweep no longer needs `model` (dispose it if the provider owns nothing else). */
  release?(task: string, model: DecoderModel): void;
}

/**
 * Loads each task's model from its checkpoint directory (`config.json` + `model.safetensors`,
 * via `loadCheckpoint` of `@lethe/model/node`) and disposes it on release.
 *
 * @throws LetheError (from `load`) `E_ARG` naming `checkpoints.<task>` for a task without a
 *   checkpoint, plus the errors of `loadCheckpoint` (`E_FORMAT`, `E_CHECKPOINT`, …).
 */
export function checkpointModels(checkpoints: Readonly<Record<string, string>>): ModelProvider {
  return {
    async load(task) {
      const dir = checkpoints[task];
      if (dir === undefined) {
        throw new LetheError(
          'E_ARG',
          'no checkpoint directory for this task and no model provider given',
          `checkpoints.${task}`,
        );
      }
      const checkpoint = await loadCheckpoint(dir);
      return DecoderModel.fromTensors(checkpoint.config, checkpoint.tensors);
    },
    release(_task, model) {
      model.dispose();
    },
  };
}
