import type { Task } from '@lethe/eval';
import {
  type ChatTemplate,
  type DecoderModel,
  type ModelFiles,
  readModelFiles,
  type Tokenizer,
} from '@lethe/model';
import { readTaskModelFiles, TASK_MODEL_FILE } from '@lethe/task-models';

/** A model the worker holds, with what generating from it needs. */
export interface LoadedModel {
  readonly location: string;
  readonly model: DecoderModel;
  readonly tokenizer: Tokenizer;
  /** The ids that end a generation. */
  readonly eosTokenIds: readonly number[];
  /** The task of a task model (its example prompts and verifier); undefined otherwise. */
  readonly task: Task | undefined;
  /** The chat template of a Hugging Face directory that has one. */
  readonly chatTemplate: ChatTemplate | undefined;
}

/**
 * Reads the model directory behind `files` as `lethe generate` does: a task model when it has
 * `lethe-model.json` (its tokenizer's EOS ends a generation), else any directory
 * `readModelFiles` reads (a Hugging Face Llama / Qwen2 one), which must have a tokenizer.
 */
export async function loadModelFiles(files: ModelFiles): Promise<LoadedModel> {
  if ((await files.read(TASK_MODEL_FILE)) !== undefined) {
    const loaded = await readTaskModelFiles(files);
    return {
      location: files.location,
      model: loaded.model,
      tokenizer: loaded.tokenizer,
      eosTokenIds: [loaded.tokenizer.eosId],
      task: loaded.task,
      chatTemplate: undefined,
    };
  }
  const loaded = await readModelFiles(files);
  return {
    location: files.location,
    model: loaded.model,
    tokenizer: loaded.tokenizer!,
    eosTokenIds: loaded.eosTokenIds,
    task: undefined,
    chatTemplate: loaded.chatTemplate,
  };
}
