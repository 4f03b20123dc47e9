import type { BpeModel } from './bpe';
import type { SplitPattern } from './split-pattern';

/** How {@link bpeTokenizerJson} frames a byte-level BPE vocabulary. */
export interface BpeTokenizerJsonOptions {
  /** The pre-tokenizer's split (e.g. `QWEN2_PATTERN`: one digit per piece). */
  readonly pattern: SplitPattern;
  /** Special tokens, given ids after the BPE vocabulary in this order. */
  readonly specialTokens: readonly string[];
  /** Unicode normalisation applied before the split, if any. */
  readonly normalization?: 'NFC';
}

/**
 * A Hugging Face `tokenizer.json` (as the `tokenizers` library saves it) for a byte-level BPE
 * learnt by `trainBpe`, in Qwen2's form: an optional NFC normaliser; a `Split` pre-tokenizer
 * with `pattern` (behaviour `Isolated`) followed by `ByteLevel`; a byte-level post-processor
 * and decoder that add nothing; merges written as `[left, right]` pairs. The special tokens
 * follow the BPE vocabulary as added tokens. `HfTokenizer` (and any `tokenizers` runtime) reads
 * it.
 *
 * @example
 * ```ts
 * const bpe = trainBpe(corpus, { merges: 512, pattern: QWEN2_PATTERN });
 * const json = bpeTokenizerJson(bpe, { pattern: QWEN2_PATTERN, specialTokens: ['<|endoftext|>'] });
 * ```
 */
export function bpeTokenizerJson(bpe: BpeModel, options: BpeTokenizerJsonOptions): object {
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: options.specialTokens.map((content, i) => ({
      id: bpe.vocab.length + i,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: options.normalization === 'NFC' ? { type: 'NFC' } : null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        {
          type: 'Split',
          pattern: { Regex: options.pattern.hf },
          behavior: 'Isolated',
          invert: false,
        },
        { ...byteLevel, use_regex: false },
      ],
    },
    post_processor: { ...byteLevel, use_regex: false },
    decoder: { ...byteLevel, use_regex: false },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: Object.fromEntries(bpe.vocab.map((token, id) => [token, id])),
      merges: bpe.merges.map(([left, right]) => [left, right]),
    },
  };
}
