import { LetheError } from '@lethe/core';
import { kindOf } from '../option-checks';
import { CharTokenizer } from './char-tokenizer';
import { HfTokenizer, type HfTokenizerOptions, TOKENIZER_FILE } from './hf-tokenizer';
import type { Tokenizer } from './tokenizer';

/**
 * The tokenizer a parsed `tokenizer.json` describes: Lethe's character tokenizer
 * (`{"type": "char", …}`, what {@link CharTokenizer.toJSON} writes and the task models in
 * `models/` hold), a Hugging Face tokenizer (an object with a `model`, built with `config`, the
 * parsed `tokenizer_config.json`, see {@link HfTokenizer}), or the JSON form of either
 * (`{"type": "hf", …}` from {@link HfTokenizer.toJSON}).
 *
 * @param config the parsed `tokenizer_config.json` of a Hugging Face tokenizer (default `{}`);
 *   not used for a character tokenizer.
 * @throws LetheError `E_FORMAT` naming `options.source` (default `tokenizer.json`) for JSON that
 *   is none of these; the errors of {@link CharTokenizer.fromJSON} and of {@link HfTokenizer}.
 */
export function tokenizerFromJson(
  json: unknown,
  config: unknown = {},
  options: HfTokenizerOptions = {},
): Tokenizer {
  const source = options.source ?? TOKENIZER_FILE;
  const value = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  if (value.type === 'char') return CharTokenizer.fromJSON(json);
  if (value.type === 'hf') return HfTokenizer.fromJSON(json);
  if (typeof value.model === 'object' && value.model !== null) {
    return new HfTokenizer(json, config, options);
  }
  throw new LetheError(
    'E_FORMAT',
    `is neither a Lethe character tokenizer ({"type": "char", …}) nor a Hugging Face tokenizer (an object with a "model"), got ${Array.isArray(json) ? 'an array' : kindOf(json)}${typeof value.type === 'string' ? ` of type ${JSON.stringify(value.type)}` : ''}`,
    source,
  );
}
