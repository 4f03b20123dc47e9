import type { Tokenizer } from '@lethe/model';
import { invalidRequest } from './api-error';

/**
 * How much a tokenizer's normalizer may shorten text before it is split: NFC / NFKC compose at
 * most three code units into one (a Hangul syllable from its jamo), and a factor of 4 leaves room.
 */
const NORMALIZATION_SLACK = 4;

/**
 * The longest text (UTF-16 code units) a prompt of `context` tokens can come from: each token
 * covers at most the text its id decodes to alone plus one unit (a decoder that drops a leading
 * space), times {@link NORMALIZATION_SLACK}. A prompt longer than this cannot fit the context
 * whatever its words, so it is refused before the tokenizer runs — tokenizing a megabyte holds
 * the event loop, and every other request with it, for a second or more. One decode per id.
 */
export function promptCharLimit(tokenizer: Tokenizer, context: number): number {
  let longest = 1;
  for (let id = 0; id < tokenizer.vocabSize; id++) {
    longest = Math.max(longest, tokenizer.decode([id]).length + 1);
  }
  return context * longest * NORMALIZATION_SLACK;
}

/**
 * Refuses (400 `context_length_exceeded` naming `param`) a prompt text longer than `limit` code
 * units without tokenizing it (see {@link promptCharLimit}).
 */
export function checkPromptChars(text: string, limit: number, param: string): void {
  if (text.length > limit) {
    throw invalidRequest(
      param,
      `has ${text.length} characters: more than any prompt that fits the model's context (${limit})`,
      'context_length_exceeded',
    );
  }
}
