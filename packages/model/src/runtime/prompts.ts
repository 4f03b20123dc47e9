import { LetheError } from '@lethe/core';
import { checkTokenIds } from '../decoder/forward-checks';
import type { ModelConfig } from '../io/index';
import { kindOf } from '../option-checks';

/** A prompt's token ids: an `Int32Array`, or a plain array of integers (copied into one). */
export type Prompt = Int32Array | readonly number[];

/**
 * Checks a batch of prompts against the model and returns them as `Int32Array`s: an
 * `Int32Array` as is, a plain array copied once its ids are known to be valid (so `1.5` or
 * `2 ** 32` is refused, not truncated or wrapped).
 *
 * @throws LetheError `E_ARG` naming `prompts` when it is not a non-empty array, or `prompts[i]`
 *   when prompt `i` is neither an `Int32Array` nor an array, is empty, holds an id outside
 *   `[0, vocab_size)`, or is longer than the model's context (`max_position_embeddings`).
 */
export function promptIds(prompts: readonly Prompt[], config: ModelConfig): Int32Array[] {
  if (!Array.isArray(prompts) || prompts.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty array of prompts', 'prompts');
  }
  return prompts.map((prompt, i) => promptOf(prompt, config, `prompts[${i}]`));
}

/**
 * Checks one prompt against the model and returns it as an `Int32Array` (see {@link promptIds}).
 *
 * @throws LetheError `E_ARG` naming `argument` when the prompt is neither an `Int32Array` nor an
 *   array, is empty, holds an id outside `[0, vocab_size)`, or is longer than the model's context
 *   (`max_position_embeddings`).
 */
export function promptOf(prompt: Prompt, config: ModelConfig, argument: string): Int32Array {
  const given = prompt as unknown;
  if (!(given instanceof Int32Array || Array.isArray(given))) {
    throw new LetheError(
      'E_ARG',
      `must be an Int32Array or an array of token ids, got ${kindOf(given)}`,
      argument,
    );
  }
  if (prompt.length === 0) throw new LetheError('E_ARG', 'is empty', argument);
  checkTokenIds(prompt, config.vocab_size, argument);
  if (prompt.length > config.max_position_embeddings) {
    throw new LetheError(
      'E_ARG',
      `has ${prompt.length} tokens, past the model's context of ${config.max_position_embeddings} (max_position_embeddings)`,
      argument,
    );
  }
  return prompt instanceof Int32Array ? prompt : Int32Array.from(prompt);
}
