export {
  CHAR_SPECIAL_TOKENS,
  CharTokenizer,
  type CharTokenizerJson,
  type CharTokenizerOptions,
  type UnknownCharPolicy,
} from './char-tokenizer';
export type { DecodeOptions, EncodeOptions, Tokenizer } from './tokenizer';
