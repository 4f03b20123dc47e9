import { LetheError } from '@lethe/core';
import { formatAnswer } from './answer';
import type { SeededRandom } from './seeded';
import { distinctPseudoWords } from './words';

/** Syllables of a word of the context (words are 4 letters). */
export const FREQUENT_WORD_SYLLABLES = 2;

/**
 * Smallest difference in occurrences between consecutive words among the `top + 1` most
 * frequent: the answer's words are strictly ordered and no other word comes within this many
 * occurrences of the last of them, so miscounting by one never changes the answer.
 */
export const FREQUENT_WORDS_MIN_GAP = 2;

/** What a frequent-words instance is made of. */
export interface FrequentWordsSpec {
  /** Longest context (the words and the spaces between them), in characters = tokens. */
  readonly contextChars: number;
  /** Words asked for: the `top` most frequent, most frequent first. */
  readonly top: number;
  /** Zipf exponent: the word of rank `r` occurs about `r^-alpha` times as often as the first. */
  readonly alpha: number;
  /** Most distinct words of a context. */
  readonly maxWords: number;
}

/** A generated frequent-words instance. */
export interface FrequentWordsInstance {
  readonly prompt: string;
  readonly target: string;
  /** The `top` most frequent words, most frequent first (the expected answer). */
  readonly words: readonly string[];
  /** Their occurrences, then those of the next most frequent word. */
  readonly counts: readonly number[];
  /** Distinct words in the context. */
  readonly vocabulary: number;
  /** Length of the context (the prompt before the question line). */
  readonly contextLength: number;
}

/** Words of a context of `contextChars` characters (4-letter words and single spaces). */
export function frequentWordsTotal(contextChars: number): number {
  return Math.floor((contextChars + 1) / (2 * FREQUENT_WORD_SYLLABLES + 1));
}

/**
 * Occurrences of each word of a Zipf-distributed context of `total` words, by rank (so
 * non-increasing), summing to `total`: the ideal counts `total · r^-alpha / H` (`H` the sum of
 * `r^-alpha` over the ranks) rounded by largest remainder. The vocabulary is as large as it can
 * be, up to `maxWords`, with every ideal count at least 1, so every word occurs. Depends on
 * its arguments only: every example of a task has the same counts (its words and order differ).
 */
export function zipfCounts(total: number, alpha: number, maxWords: number): number[] {
  let harmonic = 1;
  let words = 1;
  while (words < maxWords) {
    const next = harmonic + (words + 1) ** -alpha;
    if ((total * (words + 1) ** -alpha) / next < 1) break;
    harmonic = next;
    words++;
  }
  const ideal = Array.from({ length: words }, (_, r) => (total * (r + 1) ** -alpha) / harmonic);
  const counts = ideal.map(Math.floor);
  const remainder = total - counts.reduce((sum, c) => sum + c, 0);
  const byFraction = ideal
    .map((x, r) => ({ r, fraction: x - Math.floor(x) }))
    .sort((a, b) => b.fraction - a.fraction || a.r - b.r);
  for (let i = 0; i < remainder; i++) counts[byFraction[i]!.r]!++;
  return counts;
}

/**
 * The smallest difference between consecutive counts among the first `top + 1` of `counts`
 * (non-increasing), or -1 when there are not `top + 1` words.
 */
export function topGap(counts: readonly number[], top: number): number {
  if (counts.length < top + 1) return -1;
  let gap = Number.POSITIVE_INFINITY;
  for (let r = 0; r < top; r++) gap = Math.min(gap, counts[r]! - counts[r + 1]!);
  return gap;
}

/**
 * The word counts of a frequent-words context: {@link zipfCounts} for the words that fit
 * `contextChars`, with the `top` first counts raised where needed so that each exceeds the
 * next by {@link FREQUENT_WORDS_MIN_GAP}; the occurrences added are taken from the rarest words
 * (a word left with none is dropped), so the total stays the same. `undefined` when the context
 * is too short for that (the rarest words run out before the word after the top ones).
 */
export function frequentWordCounts(
  contextChars: number,
  top: number,
  alpha: number,
  maxWords: number,
): number[] | undefined {
  const counts = zipfCounts(frequentWordsTotal(contextChars), alpha, maxWords);
  if (counts.length < top + 1) return undefined;
  let surplus = 0;
  for (let r = top - 1; r >= 0; r--) {
    const raise = counts[r + 1]! + FREQUENT_WORDS_MIN_GAP - counts[r]!;
    if (raise > 0) {
      counts[r]! += raise;
      surplus += raise;
    }
  }
  while (surplus > 0) {
    const last = counts.length - 1;
    if (last <= top) return undefined;
    const taken = Math.min(surplus, counts[last]!);
    counts[last]! -= taken;
    surplus -= taken;
    if (counts[last] === 0) counts.pop();
  }
  return counts;
}

/**
 * RULER's frequent-words extraction: a context of 4-letter pseudo-words separated by spaces,
 * as many as fit `contextChars`, with Zipf-like counts ({@link frequentWordCounts}) given to
 * distinct words in random order and shuffled.
 *
 * Prompt: the context, a newline, `what are the <top> most frequent words in order of
 * frequency?` (`what is the most frequent word?` for one), a newline. Target:
 * `answer: <w1> <w2> ….` — the `top` most frequent words, most frequent first.
 */
export function frequentWordsInstance(
  random: SeededRandom,
  spec: FrequentWordsSpec,
): FrequentWordsInstance {
  const counts = frequentWordCounts(spec.contextChars, spec.top, spec.alpha, spec.maxWords);
  if (counts === undefined) {
    throw new LetheError('E_ARG', `is too short for ${spec.top} frequent words`, 'contextChars');
  }
  const vocabulary = distinctPseudoWords(random, counts.length, FREQUENT_WORD_SYLLABLES);
  const context = random
    .shuffle(vocabulary.flatMap((word, r) => Array.from({ length: counts[r]! }, () => word)))
    .join(' ');
  const words = vocabulary.slice(0, spec.top);
  const question =
    spec.top === 1
      ? 'what is the most frequent word?'
      : `what are the ${spec.top} most frequent words in order of frequency?`;
  return {
    prompt: `${context}\n${question}\n`,
    target: formatAnswer(words.join(' ')),
    words,
    counts: counts.slice(0, spec.top + 1),
    vocabulary: vocabulary.length,
    contextLength: context.length,
  };
}
