import { LetheError } from '@lethe/core';
import { CharTokenizer, type Tokenizer } from '@lethe/model';
import { encodeText } from './generation-run';

/**
 * Token ids of a typed prompt as {@link encodeText} gives them (BOS first when the tokenizer has
 * one), refusing a character a character tokenizer does not know instead of encoding it as
 * `<unk>` — how `lethe generate` and the browser example read what a person typed.
 *
 * @param argument what the text is called in the error (a flag, a form field).
 * @throws LetheError `E_ARG` naming `argument` for a character outside the alphabet of a
 *   character tokenizer, with the character and the alphabet.
 * @example
 * ```ts
 * encodePrompt(tokenizer, 'key 12?\n', '--prompt');
 * ```
 */
export function encodePrompt(tokenizer: Tokenizer, text: string, argument: string): Int32Array {
  const prompt = encodeText(tokenizer, text);
  if (!(tokenizer instanceof CharTokenizer)) return prompt;
  const unknown = prompt.indexOf(tokenizer.unkId);
  if (unknown >= 0) {
    const char = Array.from(text)[unknown - (tokenizer.bosId === undefined ? 0 : 1)];
    throw new LetheError(
      'E_ARG',
      `character ${JSON.stringify(char)} is not in the model's alphabet ${JSON.stringify(tokenizer.alphabet.join(''))}`,
      argument,
    );
  }
  return prompt;
}
