import { inFile, LetheError } from '@lethe/core';
import { checkTaskTokenizer, createTask, type Task } from '@lethe/eval';
import {
  CharTokenizer,
  CONFIG_FILE,
  type DecoderModel,
  HfTokenizer,
  type ModelFiles,
  readModelFiles,
  TOKENIZER_FILE,
} from '@lethe/model';
import { parseTaskModelManifest, TASK_MODEL_FILE, type TaskModelManifest } from './manifest';

/**
 * A task model's tokenizer: a task's character tokenizer, or the suite's byte-level BPE; either
 * way with the EOS id that ends an answer.
 */
export type TaskTokenizer = (CharTokenizer | HfTokenizer) & { readonly eosId: number };

/** A task model read from its directory (on disk, over HTTP or from picked files). */
export interface TaskModel {
  /** The directory it was read from (`ModelFiles.location`: a path or URL). */
  readonly dir: string;
  readonly manifest: TaskModelManifest;
  /** The model (the caller owns it: `dispose()` it when done). */
  readonly model: DecoderModel;
  readonly tokenizer: TaskTokenizer;
  /** The task it was trained for, with the options it was trained with. */
  readonly task: Task;
}

/**
 * Reads a task-model directory written by `pretrainTaskModel` (`lethe pretrain`) through
 * `files`, wherever they are: a folder on disk (`loadTaskModel` of `@lethe/task-models/node` is
 * this over `nodeModelFiles`), a web server (`modelFilesFromUrl` of `@lethe/model`) or the files
 * a visitor picked (`modelFilesFromFileList`). Reads and checks `lethe-model.json` (format,
 * version, fields), rebuilds the task, reads the model and tokenizer (`readModelFiles`) and
 * checks that they fit the manifest and the task. Browser-safe.
 *
 * @example
 * ```ts
 * import { modelFilesFromUrl } from '@lethe/model';
 *
 * const { model, task } = await readTaskModelFiles(modelFilesFromUrl('/models/retrieval/'));
 * console.log(task.name, model.config.num_hidden_layers);
 * model.dispose();
 * ```
 * @throws LetheError naming the file (`files.pathOf(name)`) and why: `E_CHECKPOINT` for a
 *   missing or unreadable file (a missing `lethe-model.json`: the directory is not a task
 *   model), a tokenizer of another task or a config that differs from the manifest; `E_FORMAT`
 *   for a file that is not JSON or a manifest of another format or version; the errors of
 *   `readModelFiles` for the weights and config.
 */
export async function readTaskModelFiles(files: ModelFiles): Promise<TaskModel> {
  const manifestPath = files.pathOf(TASK_MODEL_FILE);
  const bytes = await files.read(TASK_MODEL_FILE);
  if (bytes === undefined) {
    throw new LetheError(
      'E_CHECKPOINT',
      `is missing: ${files.location} is not a task-model directory (lethe pretrain writes one)`,
      manifestPath,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw new LetheError('E_FORMAT', `is not JSON: ${(error as Error).message}`, manifestPath);
  }
  const manifest = parseTaskModelManifest(json, manifestPath);
  let task: Task;
  try {
    task = createTask(manifest.task.name, manifest.task.options);
  } catch (error) {
    throw inFile(manifestPath, error);
  }
  const { model, tokenizer, config } = await readModelFiles(files);
  let taskTokenizer: TaskTokenizer;
  try {
    checkTaskTokenizer(tokenizer!, task, files.pathOf(TOKENIZER_FILE));
    if (!(tokenizer instanceof CharTokenizer || tokenizer instanceof HfTokenizer)) {
      throw new LetheError(
        'E_CHECKPOINT',
        'is neither a character nor a Hugging Face tokenizer',
        files.pathOf(TOKENIZER_FILE),
      );
    }
    if (tokenizer.eosId === undefined) {
      throw new LetheError('E_CHECKPOINT', 'has no EOS token', files.pathOf(TOKENIZER_FILE));
    }
    taskTokenizer = tokenizer as TaskTokenizer;
    const size = manifest.model;
    const expected: [string, number, number][] = [
      ['hidden_size', config.hidden_size, size.hidden],
      ['num_hidden_layers', config.num_hidden_layers, size.layers],
      ['num_attention_heads', config.num_attention_heads, size.heads],
      ['num_key_value_heads', config.num_key_value_heads, size.kvHeads],
      ['intermediate_size', config.intermediate_size, size.intermediate],
    ];
    for (const [field, actual, wanted] of expected) {
      if (actual !== wanted) {
        throw new LetheError(
          'E_CHECKPOINT',
          `${field} is ${actual} but ${TASK_MODEL_FILE} says ${wanted}`,
          files.pathOf(CONFIG_FILE),
        );
      }
    }
  } catch (error) {
    model.dispose();
    throw error;
  }
  return { dir: files.location, manifest, model, tokenizer: taskTokenizer, task };
}
