import { loadTaskModel, readModelDirectory, type TaskModel } from '@lethe/eval/node';
import { LetheError } from '@lethe/tensor';

const SHAPE_FIELDS = [
  'vocab_size',
  'hidden_size',
  'num_hidden_layers',
  'num_attention_heads',
  'num_key_value_heads',
] as const;

/**
 * The frozen backbone of a gate run: the task model in `model` (its task, tokenizer and
 * weights), or — given `weights` — the same task with the weights of another directory of the
 * same shape (a fine-tune of it, e.g. the RL-trained `models/countdown-rl`).
 *
 * @throws LetheError as `loadTaskModel` / `readModelDirectory`; `E_ARG` naming `weights` when
 *   its config differs from the task model's in vocabulary, width, layers or heads.
 */
export async function loadBackbone(model: string, weights: string | null): Promise<TaskModel> {
  const taskModel = await loadTaskModel(model);
  if (weights === null) return taskModel;
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
