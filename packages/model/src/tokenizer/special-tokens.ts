import { LetheError } from '@lethe/core';

/** File name of a Hugging Face tokenizer's settings, beside `tokenizer.json`. */
export const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json';

/**
 * The special-token fields of `tokenizer_config.json` that transformers hands to a chat
 * template (its `special_tokens_map`), besides `additional_special_tokens`.
 */
const SPECIAL_TOKEN_FIELDS = [
  'bos_token',
  'eos_token',
  'unk_token',
  'sep_token',
  'pad_token',
  'cls_token',
  'mask_token',
] as const;

/**
 * The text of a special token as `tokenizer_config.json` gives it: a string, or an added-token
 * object `{"content": "<s>", …}` (as older transformers write it); `undefined` when the field is
 * absent or null.
 *
 * @param source how the error names the file, e.g. its path.
 * @throws LetheError `E_FORMAT` naming `source` for any other value.
 */
export function specialTokenText(
  config: Readonly<Record<string, unknown>>,
  field: string,
  source: string,
): string | undefined {
  const value = config[field];
  if (value === undefined || value === null) return undefined;
  const text = tokenText(value);
  if (text === undefined) {
    throw new LetheError(
      'E_FORMAT',
      `${field} must be a string or an object with a string "content", got ${JSON.stringify(value)}`,
      source,
    );
  }
  return text;
}

/**
 * The special tokens `tokenizer_config.json` defines, as transformers' `special_tokens_map`:
 * each set field of {@link SPECIAL_TOKEN_FIELDS} as its text, and
 * `additional_special_tokens` as a list of texts when present.
 *
 * @throws LetheError `E_FORMAT` naming `source` for a field that is not a token.
 */
export function specialTokensMap(
  config: Readonly<Record<string, unknown>>,
  source: string,
): Record<string, string | string[]> {
  const map: Record<string, string | string[]> = {};
  for (const field of SPECIAL_TOKEN_FIELDS) {
    const text = specialTokenText(config, field, source);
    if (text !== undefined) map[field] = text;
  }
  const additional = config.additional_special_tokens;
  if (additional !== undefined && additional !== null) {
    const texts = Array.isArray(additional) ? additional.map(tokenText) : undefined;
    if (texts === undefined || texts.some((text) => text === undefined)) {
      throw new LetheError(
        'E_FORMAT',
        'additional_special_tokens must be a list of strings or of objects with a string "content"',
        source,
      );
    }
    map.additional_special_tokens = texts as string[];
  }
  return map;
}

function tokenText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) {
    const content = (value as { content?: unknown }).content;
    if (typeof content === 'string') return content;
  }
  return undefined;
}
