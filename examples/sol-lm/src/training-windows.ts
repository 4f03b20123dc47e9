import { LetheError } from '@lethe/core';
import { encodeText } from '@lethe/eval';
import { trainingSeed } from '@lethe/task-models';
import type { TaskModel } from '@lethe/task-models/node';

/**
 * The controller's training documents: the language-modelling task's training text for `seed`
 * (a stream the held-out documents never draw from), cut into consecutive windows of `length`
 * tokens (BOS first when the tokenizer has one, then `length − 1` characters).
 *
 * @throws LetheError `E_ARG` naming `model` when its task is not a language-modelling one, or
 *   `length` when the text holds fewer than two windows.
 */
export function trainingWindows(taskModel: TaskModel, seed: number, length: number): Int32Array[] {
  const { task } = taskModel;
  if (task.kind !== 'perplexity') {
    throw new LetheError('E_ARG', `is a ${task.name} model, not a language model`, 'model');
  }
  const text = task.trainingText(trainingSeed(seed));
  const chars = length - (task.tokenizer.bosId === undefined ? 0 : 1);
  const windows: Int32Array[] = [];
  for (let start = 0; start + chars <= text.length; start += chars) {
    windows.push(encodeText(task.tokenizer, text.slice(start, start + chars)));
  }
  if (windows.length < 2) {
    throw new LetheError(
      'E_ARG',
      `${length} tokens per window leave ${windows.length} window(s) of the training text`,
      'length',
    );
  }
  return windows;
}
