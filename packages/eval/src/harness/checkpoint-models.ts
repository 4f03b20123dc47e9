// Node-only (reads checkpoint directories): exported by `@lethe/eval/node`.

import { join } from 'node:path';
import { LetheError } from '@lethe/core';
import { TOKENIZER_FILE } from '@lethe/model';
import { readModelDirectory } from '@lethe/model/node';
import { isTaskName, taskTokenizer } from '../tasks/index';
import type { Task } from '../tasks/task';
import { checkTaskTokenizer } from '../tasks/task-tokenizer-check';
import { requireObject } from './arguments';
import type { ModelProvider } from './model-provider';

/**
 * Loads each task's model from its checkpoint directory (`config.json` + `model.safetensors`,
 * and `tokenizer.json` when there is one, as a task-model directory of `lethe pretrain` or the
 * quickstart's checkpoint has; see `readModelDirectory`) and disposes it on release. When the
 * directory has a tokenizer, it must be the task's (a model trained for another task is
 * refused): the tokenizer of the task `tasks` holds under the label, else of the registry task
 * of that name; a label that is neither is not checked.
 *
 * @param checkpoints - directories by task label.
 * @param tasks - the sweep's tasks by label (default: none, labels read as registry names).
 * @throws LetheError (from `load`) `E_ARG` naming `checkpoints.<task>` for a task without a
 *   checkpoint; errors naming the file and why for an unreadable or malformed directory
 *   (`E_CHECKPOINT`, `E_FORMAT`, `E_ARG`); `E_CHECKPOINT` naming `tokenizer.json` when it is
 *   not the task's tokenizer. `E_ARG` naming `checkpoints` or `tasks` (at once) when it is not
 *   an object or a map.
 */
export function checkpointModels(
  checkpoints: Readonly<Record<string, string>>,
  tasks: ReadonlyMap<string, Pick<Task, 'name' | 'tokenizer'>> = new Map(),
): ModelProvider {
  requireObject(checkpoints, 'checkpoints', 'an object mapping task labels to directories');
  if (!(tasks instanceof Map)) {
    throw new LetheError('E_ARG', 'must be a Map of tasks by label', 'tasks');
  }
  const taskOf = (label: string): Pick<Task, 'name' | 'tokenizer'> | undefined =>
    tasks.get(label) ??
    (isTaskName(label) ? { name: label, tokenizer: taskTokenizer(label) } : undefined);
  return {
    async load(task) {
      const dir = Object.hasOwn(checkpoints, task) ? checkpoints[task] : undefined;
      if (dir === undefined) {
        throw new LetheError(
          'E_ARG',
          'no checkpoint directory for this task and no model provider given',
          `checkpoints.${task}`,
        );
      }
      const { model, tokenizer } = await readModelDirectory(dir, { tokenizer: 'optional' });
      const expected = taskOf(task);
      if (tokenizer !== undefined && expected !== undefined) {
        try {
          checkTaskTokenizer(tokenizer, expected, join(dir, TOKENIZER_FILE));
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
