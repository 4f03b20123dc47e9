import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inFile, LetheError, unreadableFile } from '@lethe/core';
import type { Task } from '@lethe/eval';
import { checkTaskTokenizer, createTask } from '@lethe/eval';
import { type CharTokenizer, CONFIG_FILE, type DecoderModel, TOKENIZER_FILE } from '@lethe/model';
import { assertDirectory, readModelDirectory } from '@lethe/model/node';
import { parseTaskModelManifest, TASK_MODEL_FILE, type TaskModelManifest } from './manifest';

/** A task model loaded from its directory. */
export interface TaskModel {
  readonly dir: string;
  readonly manifest: TaskModelManifest;
  /** The model (the caller owns it: `dispose()` it when done). */
  readonly model: DecoderModel;
  readonly tokenizer: CharTokenizer;
  /** The task it was trained for, with the options it was trained with. */
  readonly task: Task;
}

/**
 * Loads a task-model directory written by `pretrainTaskModel` (`lethe pretrain`): reads and
 * checks `lethe-model.json` (format, version, fields), rebuilds the task, reads the model and
 * tokenizer (`readModelDirectory`) and checks that they fit the manifest and the task.
 *
 * @throws LetheError naming the file and why: `E_CHECKPOINT` for a missing directory or an
 *   unreadable / missing file, a tokenizer of another task or a config that differs from the
 *   manifest; `E_FORMAT` for a file that is not JSON or a manifest of another format or
 *   version; the errors of `readModelDirectory` for the weights and config.
 */
export async function loadTaskModel(dir: string): Promise<TaskModel> {
  await assertDirectory(dir);
  const manifestPath = join(dir, TASK_MODEL_FILE);
  let text: string;
  try {
    text = await readFile(manifestPath, 'utf8');
  } catch (error) {
    const reason = unreadableFile(manifestPath, error);
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw reason;
    throw new LetheError(
      'E_CHECKPOINT',
      `is missing: ${dir} is not a task-model directory (lethe pretrain writes one)`,
      manifestPath,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
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
  const { model, tokenizer, config } = await readModelDirectory(dir);
  let charTokenizer: CharTokenizer;
  try {
    checkTaskTokenizer(tokenizer!, task, join(dir, TOKENIZER_FILE));
    charTokenizer = tokenizer!;
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
          join(dir, CONFIG_FILE),
        );
      }
    }
  } catch (error) {
    model.dispose();
    throw error;
  }
  return { dir, manifest, model, tokenizer: charTokenizer, task };
}
