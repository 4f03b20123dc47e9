import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ContinuousBatcher, HfTokenizer } from '@lethe/model';
import { readModelDirectory } from '@lethe/model/node';
import { TASK_MODEL_FILE } from '@lethe/task-models';
import { promptCharLimit } from './prompt-char-limit';
import type { ServedModel } from './served-model';

/** How each model's batch is sized. */
export interface BatchLimits {
  /** Sequences decoding at once. */
  readonly maxSequences: number;
  /** Requests waiting for a slot; more → 429. */
  readonly maxQueue: number;
  /** Prompt tokens a joining request feeds per step. */
  readonly prefillChunk: number;
}

/**
 * Loads a model the server was pointed at, by id: a task-model directory (`lethe pretrain`'s,
 * character tokenizer, no chat template) or a Hugging Face Llama / Qwen2 directory
 * (`config.json`, `model.safetensors` or sharded `model-0000x-of-0000y.safetensors` with
 * `model.safetensors.index.json`, `tokenizer.json`, `tokenizer_config.json` with its chat
 * template, `generation_config.json` with its EOS ids), and starts its continuous batch.
 *
 * A completion's text prompt is encoded as its tokenizer's own post-processor does (an HF
 * tokenizer adds its BOS where the model expects one; a character tokenizer adds nothing); a
 * chat prompt is the template's text, which writes its special tokens itself.
 *
 * @throws LetheError naming the file at fault (see `readModelDirectory`).
 */
export async function loadServedModel(
  id: string,
  dir: string,
  limits: BatchLimits,
): Promise<ServedModel> {
  const isTaskModel = existsSync(join(dir, TASK_MODEL_FILE));
  const loaded = await readModelDirectory(dir);
  const tokenizer = loaded.tokenizer!;
  const encode: ServedModel['encode'] =
    tokenizer instanceof HfTokenizer
      ? (text, kind) =>
          tokenizer.encode(text, kind === 'completion' ? { addSpecialTokens: true } : {})
      : (text) => tokenizer.encode(text);
  return {
    id,
    model: loaded.model,
    tokenizer,
    chat: isTaskModel ? undefined : loaded.chatTemplate,
    encode,
    stopTokens: loaded.eosTokenIds,
    maxPromptChars: promptCharLimit(tokenizer, loaded.model.config.max_position_embeddings),
    created: Math.floor(Date.now() / 1000),
    capacity: limits.maxSequences + limits.maxQueue,
    batcher: new ContinuousBatcher({
      model: loaded.model,
      maxSequences: limits.maxSequences,
      maxQueue: limits.maxQueue,
      prefillChunk: limits.prefillChunk,
    }),
  };
}
