// How the suite's byte-level BPE tokenizer (src/tasks/suite-tokenizer.json) is learnt: the
// text of the suite's mixture examples of one seed that no training or evaluation uses, a
// fixed number of merges, Qwen2's split (one digit per piece, so values and Countdown's
// numbers are read digit by digit). Deterministic: the committed file is this function's
// output (a test checks it). The corpus is the suite's text as it was when the tokenizer was
// learnt, so the committed models keep their vocabulary: `two-hop` completions were then the
// answer line alone (the `via <b>` line they now start with is left out), and verbose
// Countdown's search was unbounded (its examples are those of the unbounded task).
import { bpeTokenizerJson, QWEN2_PATTERN, trainBpe } from '@lethe/model';
import { countdownTask, VERBOSE_COUNTDOWN } from '../src/tasks/countdown';
import { createTask } from '../src/tasks/registry';
import { SUITE_COUNTDOWN_MAX_TRACE_CHARS, SUITE_MEMBERS, type SuiteData } from '../src/tasks/suite';
import { viaLine } from '../src/tasks/two-hop';

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

/** A completion without the `via <b>` line a two-hop completion starts with. */
function withoutVia(target: string): string {
  return target.startsWith(viaLine('')) ? target.slice(target.indexOf('\n') + 1) : target;
}

/** The suite tokenizer's `tokenizer.json`, learnt from {@link SUITE_TOKENIZER_RECIPE}. */
export function buildSuiteTokenizerJson(): object {
  const { seed, examples, contextChars, merges } = SUITE_TOKENIZER_RECIPE;
  const task = createTask('suite', { contextChars });
  const unboundedCountdown = countdownTask({
    ...VERBOSE_COUNTDOWN,
    maxTraceChars: SUITE_COUNTDOWN_MAX_TRACE_CHARS,
  });
  let corpus = '';
  for (let i = 0; i < examples; i++) {
    const example = task.example(seed, i);
    const { member } = example.data as SuiteData;
    const { prompt, target } =
      member === 'countdown-verbose'
        ? unboundedCountdown.example(seed, Math.floor(i / SUITE_MEMBERS.length))
        : example;
    corpus += `${prompt}${withoutVia(target)}\n`;
  }
  const bpe = trainBpe(corpus, { merges, pattern: QWEN2_PATTERN });
  return bpeTokenizerJson(bpe, { pattern: QWEN2_PATTERN, specialTokens: SUITE_SPECIAL_TOKENS });
}
