// Node-only (reads checkpoint directories): exported by `@lethe/eval/node`.

import { join } from 'node:path';
import { LetheError } from '@lethe/core';
import { TOKENIZER_FILE } from '@lethe/model';
import { readModelDirectory } from '@lethe/model/node';
import { isTaskName, taskTokenizer } from '../tasks/index';
import { checkTaskTokenizer } from '../tasks/task-tokenizer-check';
import { requireObject } from './arguments';
import type { ModelProvider } from './model-provider';

/**
 * Loads each task's model from its checkpoint directory (`config.json` + `model.safetensors`,
 * and `tokenizer.json` when there is one, as a task-model directory of `lethe pretrain` or the
 * quickstart's checkpoint has; see `readModelDirectory`) and disposes it on release. When the
 * directory has a tokenizer and the task is a registry task, the tokenizer must be the task's
 * (a model trained for another task is refused).
 *
 * @throws LetheError (from `load`) `E_ARG` naming `checkpoints.<task>` for a task without a
 *   checkpoint; errors naming the file and why for an unreadable or malformed directory
 *   (`E_CHECKPOINT`, `E_FORMAT`, `E_ARG`); `E_CHECKPOINT` naming `tokenizer.json` when it is
 *   not the task's tokenizer. `E_ARG` naming `checkpoints` (at once) when it is not an object.
 */
export function checkpointModels(checkpoints: Readonly<Record<string, string>>): ModelProvider {
  requireObject(checkpoints, 'checkpoints', 'an object mapping task names to directories');
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
      const { model, tokenizer } = await readModelDirectory(dir, { tokenizer: 'optional' });
      if (tokenizer !== undefined && isTaskName(task)) {
        try {
          checkTaskTokenizer(
            tokenizer,
            { name: task, tokenizer: taskTokenizer(task) },
            join(dir, TOKENIZER_FILE),
          );
        } catch (error) {
          model.dispose();
          throw error;
        }
      }
      return model;
    },
    release(_task, model) {
      model.dispose();
    },
  };
}
