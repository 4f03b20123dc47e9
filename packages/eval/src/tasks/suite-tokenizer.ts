import { HfTokenizer } from '@lethe/model';
import tokenizerJson from './suite-tokenizer.json';

/** `tokenizer_config.json` of the suite tokenizer: its special tokens, and decoding as encoded. */
const SUITE_TOKENIZER_CONFIG = Object.freeze({
  pad_token: '<pad>',
  bos_token: '<bos>',
  eos_token: '<eos>',
  clean_up_tokenization_spaces: false,
});

/**
 * The long-context suite's byte-level BPE tokenizer: 512 merges learnt by this project from the
 * suite's own text (`scripts/make-suite-tokenizer.ts` regenerates `suite-tokenizer.json`), one
 * digit per token, then `<pad>`, `<bos>` and `<eos>` (771 ids). The filler's words and most keys
 * are one or two tokens, so a prompt of 1,024 characters is 285–430 tokens (Countdown's traces
 * stay about one token per character). Every suite prompt and target encodes and decodes back
 * exactly. Every call returns the same instance.
 *
 * @example
 * ```ts
 * const tokenizer = suiteBpeTokenizer();
 * tokenizer.encode('the number for zega is 5586.'); // 12 ids
 * ```
 */
export function suiteBpeTokenizer(): HfTokenizer {
  // Built once: a tokenizer is immutable, and every suite task (one per member in a sweep)
  // shares it.
  suiteTokenizer ??= new HfTokenizer(tokenizerJson, SUITE_TOKENIZER_CONFIG, {
    source: 'suite-tokenizer.json',
  });
  return suiteTokenizer;
}

let suiteTokenizer: HfTokenizer | undefined;
