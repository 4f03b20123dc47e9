import type { BpeModel } from '../../src/tokenizer/bpe/bpe';
import { bpeTokenizerJson } from '../../src/tokenizer/bpe/bpe-tokenizer-json';
import {
  LLAMA3_PATTERN,
  QWEN2_PATTERN,
  type SplitPattern,
} from '../../src/tokenizer/bpe/split-pattern';

/** The chat template of Llama 3 Instruct (as its `tokenizer_config.json` holds it). */
export const LLAMA3_CHAT_TEMPLATE =
  "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";

/** The ChatML template of Qwen2 Instruct, with its default system message. */
export const QWEN2_CHAT_TEMPLATE =
  "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

/** The two tokenizer families the fixtures imitate. */
export type TokenizerFamily = 'llama3' | 'qwen2';

/** What distinguishes the families' tokenizers. */
export interface FamilyTokenizer {
  readonly pattern: SplitPattern;
  readonly normalization?: 'NFC';
  /** Llama 3's BPE emits a piece that is a token as a whole without merging. */
  readonly ignoreMerges: boolean;
  /** Special tokens, ids after the BPE vocabulary in this order. */
  readonly special: readonly string[];
}

/** The tokenizer settings of each family. */
export const FAMILY_TOKENIZERS: Readonly<Record<TokenizerFamily, FamilyTokenizer>> = {
  llama3: {
    pattern: LLAMA3_PATTERN,
    ignoreMerges: true,
    special: [
      '<|begin_of_text|>',
      '<|end_of_text|>',
      '<|start_header_id|>',
      '<|end_header_id|>',
      '<|eot_id|>',
    ],
  },
  qwen2: {
    pattern: QWEN2_PATTERN,
    normalization: 'NFC',
    ignoreMerges: false,
    special: ['<|endoftext|>', '<|im_start|>', '<|im_end|>'],
  },
};

/** Id of each special token of `family` for a BPE vocabulary of `bpe`. */
export function specialIds(family: TokenizerFamily, bpe: BpeModel): Record<string, number> {
  return Object.fromEntries(
    FAMILY_TOKENIZERS[family].special.map((token, i) => [token, bpe.vocab.length + i]),
  );
}

/**
 * `tokenizer.json` in the form the `tokenizers` library saves it, with each family's
 * components: Qwen2 — `bpeTokenizerJson` with NFC (split + byte-level pre-tokenizer, a
 * byte-level post-processor that adds nothing, merges written as `["a", "b"]` pairs); Llama 3 —
 * the same without a normalizer, with offsets trimmed, a template post-processor that prepends
 * `<|begin_of_text|>`, a byte-level decoder with the prefix space and the regex, `ignore_merges`,
 * and merges written as `"a b"` strings.
 */
export function tokenizerJson(family: TokenizerFamily, bpe: BpeModel): object {
  const settings = FAMILY_TOKENIZERS[family];
  const json = bpeTokenizerJson(bpe, {
    pattern: settings.pattern,
    specialTokens: settings.special,
    ...(settings.normalization === undefined ? {} : { normalization: settings.normalization }),
  }) as TokenizerJsonParts;
  if (family !== 'llama3') return json;
  const bos = '<|begin_of_text|>';
  const ids = specialIds(family, bpe);
  return {
    ...json,
    pre_tokenizer: {
      ...json.pre_tokenizer,
      pretokenizers: json.pre_tokenizer.pretokenizers.map((p) =>
        p.type === 'ByteLevel' ? { ...p, trim_offsets: true } : p,
      ),
    },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: bos, type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: bos, type_id: 1 } },
        { Sequence: { id: 'B', type_id: 1 } },
      ],
      special_tokens: { [bos]: { id: bos, ids: [ids[bos]], tokens: [bos] } },
    },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      ...json.model,
      ignore_merges: settings.ignoreMerges,
      merges: bpe.merges.map(([a, b]) => `${a} ${b}`),
    },
  };
}

/** The parts of `bpeTokenizerJson`'s object the Llama 3 variant rewrites. */
interface TokenizerJsonParts {
  readonly pre_tokenizer: { readonly pretokenizers: readonly { readonly type: string }[] };
  readonly model: object;
}

/** `tokenizer_config.json` as transformers saves it for each family, with its chat template. */
export function tokenizerConfigJson(
  family: TokenizerFamily,
  bpe: BpeModel,
  maxLength: number,
): object {
  const ids = specialIds(family, bpe);
  const addedTokensDecoder = Object.fromEntries(
    Object.entries(ids).map(([content, id]) => [
      String(id),
      {
        content,
        lstrip: false,
        normalized: false,
        rstrip: false,
        single_word: false,
        special: true,
      },
    ]),
  );
  if (family === 'llama3') {
    return {
      added_tokens_decoder: addedTokensDecoder,
      bos_token: '<|begin_of_text|>',
      chat_template: LLAMA3_CHAT_TEMPLATE,
      clean_up_tokenization_spaces: false,
      eos_token: '<|eot_id|>',
      model_input_names: ['input_ids', 'attention_mask'],
      model_max_length: maxLength,
      tokenizer_class: 'PreTrainedTokenizerFast',
    };
  }
  return {
    add_prefix_space: false,
    added_tokens_decoder: addedTokensDecoder,
    additional_special_tokens: ['<|im_start|>', '<|im_end|>'],
    bos_token: null,
    chat_template: QWEN2_CHAT_TEMPLATE,
    clean_up_tokenization_spaces: false,
    eos_token: '<|im_end|>',
    errors: 'replace',
    model_max_length: maxLength,
    pad_token: '<|endoftext|>',
    split_special_tokens: false,
    tokenizer_class: 'Qwen2Tokenizer',
    unk_token: null,
  };
}
