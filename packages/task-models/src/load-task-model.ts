import { assertDirectory, nodeModelFiles } from '@lethe/model/node';
import { readTaskModelFiles, type TaskModel } from './read-task-model-files';

/**
 * Loads the task-model directory `dir` on disk, written by `pretrainTaskModel` (`lethe
 * pretrain`): checks that `dir` is a directory, then `readTaskModelFiles` over its files
 * (`nodeModelFiles` of `@lethe/model/node`), so every error names the file by its path.
 *
 * @example
 * ```ts
 * const { model, task } = await loadTaskModel('models/retrieval');
 * console.log(task.name, model.config.num_hidden_layers);
 * model.dispose();
 * ```
 * @throws LetheError `E_CHECKPOINT` naming `dir` when it is missing or not a directory; the
 *   errors of `readTaskModelFiles`, naming the files by their paths.
 */
export async function loadTaskModel(dir: string): Promise<TaskModel> {
  await assertDirectory(dir);
  return readTaskModelFiles(nodeModelFiles(dir));
}
