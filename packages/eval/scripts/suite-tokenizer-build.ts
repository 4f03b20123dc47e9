// How the suite's byte-level BPE tokenizer (src/tasks/suite-tokenizer.json) is learnt: the
// text of the suite's mixture examples of one seed that no training or evaluation uses, a
// fixed number of merges, Qwen2's split (one digit per piece, so values and Countdown's
// numbers are read digit by digit). Deterministic: the committed file is this function's
// output (a test checks it). The corpus is the suite's text as it was when the tokenizer was
// learnt, so the committed models keep their vocabulary: the members posed differently since
// (`two-hop` then answered without its `via <b>` line, variable tracking asked for a value's
// holders, frequent words drawn under Zipf exponent 1, verbose Countdown's search was
// unbounded and its states named no target) take their examples from their tasks as
// they were then.
import { bpeTokenizerJson, QWEN2_PATTERN, trainBpe } from '@lethe/model';
import { countdownTask, VERBOSE_COUNTDOWN } from '../src/tasks/countdown';
import { createTask } from '../src/tasks/registry';
import { retrievalTask } from '../src/tasks/retrieval';
import { SUITE_COUNTDOWN_MAX_TRACE_CHARS, SUITE_MEMBERS, type SuiteData } from '../src/tasks/suite';
import type { GenerationTask } from '../src/tasks/task';

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

/** The members the suite poses differently since, as they were posed when the corpus was read. */
function membersAsLearnt(
  contextChars: number,
): Partial<Record<SuiteData['member'], GenerationTask>> {
  return {
    'two-hop': retrievalTask({ variant: 'two-hop', contextChars, chains: 2 }),
    'variable-tracking': retrievalTask({
      variant: 'variable-tracking',
      contextChars,
      chains: 2,
      hops: 3,
    }),
    'frequent-words': retrievalTask({ variant: 'frequent-words', contextChars, top: 3 }),
    'countdown-verbose': countdownTask({
      ...VERBOSE_COUNTDOWN,
      maxTraceChars: SUITE_COUNTDOWN_MAX_TRACE_CHARS,
    }),
  };
}

/** The suite tokenizer's `tokenizer.json`, learnt from {@link SUITE_TOKENIZER_RECIPE}. */
export function buildSuiteTokenizerJson(): object {
  const { seed, examples, contextChars, merges } = SUITE_TOKENIZER_RECIPE;
  const task = createTask('suite', { contextChars });
  const asLearnt = membersAsLearnt(contextChars);
  let corpus = '';
  for (let i = 0; i < examples; i++) {
    const example = task.example(seed, i);
    const then = asLearnt[(example.data as SuiteData).member];
    const { prompt, target } = then?.example(seed, Math.floor(i / SUITE_MEMBERS.length)) ?? example;
    corpus += `${prompt}${target}\n`;
  }
  const bpe = trainBpe(corpus, { merges, pattern: QWEN2_PATTERN });
  return bpeTokenizerJson(bpe, { pattern: QWEN2_PATTERN, specialTokens: SUITE_SPECIAL_TOKENS });
}
