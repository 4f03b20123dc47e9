export {
  CHAR_SPECIAL_TOKENS,
  CharTokenizer,
  type CharTokenizerJson,
  type CharTokenizerOptions,
  type UnknownCharPolicy,
} from './char-tokenizer';
export {
  CHAT_TEMPLATE_FILE,
  type ChatMessage,
  ChatTemplate,
  type ChatTemplateFromConfigOptions,
  type ChatTemplateOptions,
  type RenderChatOptions,
} from './chat-template';
export { DecodeStream } from './decode-stream';
export {
  type HfEncodeOptions,
  HfTokenizer,
  type HfTokenizerJson,
  type HfTokenizerOptions,
  TOKENIZER_FILE,
} from './hf-tokenizer';
export { TOKENIZER_CONFIG_FILE } from './special-tokens';
export { tokenGlyphs } from './token-glyphs';
export type { DecodeOptions, EncodeOptions, Tokenizer } from './tokenizer';
export { tokenizerFromJson } from './tokenizer-json';
