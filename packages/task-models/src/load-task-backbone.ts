import { LetheError } from '@lethe/core';
import { readModelDirectory } from '@lethe/model/node';
import { loadTaskModel } from './load-task-model';
import type { TaskModel } from './read-task-model-files';

/** The config fields two directories must share for one's weights to stand in for the other's. */
const SHAPE_FIELDS = [
  'vocab_size',
  'hidden_size',
  'num_hidden_layers',
  'num_attention_heads',
  'num_key_value_heads',
] as const;

/**
 * A task model to train a policy on: the task-model directory `model` (its task, tokenizer and
 * weights), or — given `weights` — the same task and tokenizer with the weights of another model
 * directory of the same shape (a fine-tune of it without a task manifest of its own, e.g. the
 * RL-trained `models/countdown-rl`).
 *
 * @throws LetheError as `loadTaskModel` and `readModelDirectory`; `E_ARG` naming `weights` (the
 *   directory) when its config differs from the task model's in vocabulary, width, layers or
 *   heads.
 */
export async function loadTaskBackbone(model: string, weights?: string): Promise<TaskModel> {
  const taskModel = await loadTaskModel(model);
  if (weights === undefined) return taskModel;
  taskModel.model.dispose();
  const other = await readModelDirectory(weights, { tokenizer: 'optional' });
  const differing = SHAPE_FIELDS.find((f) => other.config[f] !== taskModel.model.config[f]);
  if (differing !== undefined) {
    other.model.dispose();
    throw new LetheError(
      'E_ARG',
      `has ${differing} ${other.config[differing]}, but the task model ${model} has ${taskModel.model.config[differing]}`,
      weights,
    );
  }
  return { ...taskModel, model: other.model };
}
