// How the suite's byte-level BPE tokenizer (src/tasks/suite-tokenizer.json) is learnt: the
// text of the suite's mixture examples of one seed that no training or evaluation uses, a
// fixed number of merges, Qwen2's split (one digit per piece, so values and Countdown's
// numbers are read digit by digit). Deterministic: the committed file is this function's
// output (a test checks it).
import { bpeTokenizerJson, QWEN2_PATTERN, trainBpe } from '@lethe/model';
import { createTask } from '../src/tasks/registry';

/** The corpus and the merges of the suite tokenizer. */
export const SUITE_TOKENIZER_RECIPE = Object.freeze({
  /** Task seed of the corpus (training streams start at 1,000,000; held-out seeds are small). */
  seed: 3_000_000,
  examples: 600,
  contextChars: 1024,
  merges: 512,
});

/** Special tokens after the BPE vocabulary, in id order. */
export const SUITE_SPECIAL_TOKENS = Object.freeze(['<pad>', '<bos>', '<eos>']);

/** The suite tokenizer's `tokenizer.json`, learnt from {@link SUITE_TOKENIZER_RECIPE}. */
export function buildSuiteTokenizerJson(): object {
  const { seed, examples, contextChars, merges } = SUITE_TOKENIZER_RECIPE;
  const task = createTask('suite', { contextChars });
  let corpus = '';
  for (let i = 0; i < examples; i++) {
    const example = task.example(seed, i);
    corpus += `${example.prompt}${example.target}\n`;
  }
  const bpe = trainBpe(corpus, { merges, pattern: QWEN2_PATTERN });
  return bpeTokenizerJson(bpe, { pattern: QWEN2_PATTERN, specialTokens: SUITE_SPECIAL_TOKENS });
}
