import { LetheError } from '@lethe/core';
import type { ModelConfig } from '../io/index';
import { checkObject, checkOptionalFunction } from '../option-checks';
import type { GenerateOptions } from './generate';
import { validateSampling } from './sampling';

/**
 * Validates the options {@link generate} adds to a session's: `maxNewTokens`, `sampling`, the
 * callbacks and `signal`. (The session checks its own; prompts and stop conditions need the
 * model and are checked after it.)
 *
 * @throws LetheError `E_ARG` naming `options` when it is not an object, or the bad field.
 */
export function checkGenerateOptions(options: GenerateOptions): void {
  checkObject(options, 'options');
  const { maxNewTokens } = options;
  if (!(Number.isInteger(maxNewTokens) && maxNewTokens >= 1)) {
    throw new LetheError(
      'E_ARG',
      `must be a positive integer, got ${maxNewTokens}`,
      'maxNewTokens',
    );
  }
  if (options.sampling !== undefined) validateSampling(options.sampling);
  for (const name of ['onToken', 'onStep', 'forceToken', 'now'] as const) {
    checkOptionalFunction(options[name], name);
  }
  const signal = options.signal as unknown;
  if (
    signal !== undefined &&
    typeof (signal as { throwIfAborted?: unknown } | null)?.throwIfAborted !== 'function'
  ) {
    throw new LetheError('E_ARG', 'must be an AbortSignal', 'signal');
  }
}

/**
 * Checks that every sequence fits the model's context: a prompt of `P` tokens generating
 * `maxNewTokens` = `N` feeds the model `P + N − 1` positions (the last generated token is
 * returned, never fed), which must not exceed `max_position_embeddings`.
 *
 * @throws LetheError `E_ARG` naming `maxNewTokens`, the message naming the longest prompt and
 *   how many new tokens fit after it.
 */
export function checkContextFits(
  prompts: readonly Int32Array[],
  maxNewTokens: number,
  config: ModelConfig,
): void {
  const context = config.max_position_embeddings;
  let longest = 0;
  prompts.forEach((prompt, b) => {
    if (prompt.length > prompts[longest]!.length) longest = b;
  });
  const length = prompts[longest]!.length;
  const positions = length + maxNewTokens - 1;
  if (positions > context) {
    throw new LetheError(
      'E_ARG',
      `${maxNewTokens} new tokens after ${prompts.length === 1 ? 'the prompt' : `prompt ${longest}`} (${length} tokens) need ${positions} positions, past the model's context of ${context} (max_position_embeddings); at most ${context - length + 1} fit`,
      'maxNewTokens',
    );
  }
}
