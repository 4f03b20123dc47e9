import { formatAnswer } from './answer';
import type { SeededRandom } from './seeded';
import { distinctPseudoWords } from './words';

/** Syllables of a copy drill's words (words are 4 letters). */
export const COPY_WORD_SYLLABLES = 2;

/** Words of a copy drill's line of `contextChars` characters: as many as fit, one space apart. */
export function copyWordCount(contextChars: number): number {
  return Math.floor((contextChars + 1) / (2 * COPY_WORD_SYLLABLES + 1));
}

/** A generated copy drill. */
export interface CopyDrillInstance {
  readonly prompt: string;
  readonly target: string;
  /** The queried word. */
  readonly word: string;
  /** The word that follows it in the line: the answer. */
  readonly next: string;
  /** Distinct words in the line. */
  readonly words: number;
  /** Length of the line (its copy and the question follow it). */
  readonly contextLength: number;
}

/**
 * A copy drill: a line of distinct pseudo-words, the same line again, then the question
 * `what word follows <word>?` about one word of the line but its last. Prompt: line, newline,
 * line, newline, question, newline; target: `answer: <next word>.`
 *
 * Every token of the copy but its first follows the same token as in the line, and nothing
 * else predicts it, so under a loss on the prompt too the whole second line is an induction
 * target (the previous-token head and the induction head of Olsson et al. 2022 are the only way
 * to lower it), and so is the answer: no template words, no gap between a key and what it
 * recalls. (It forms a copy from scratch in fewer updates than the recitation drill, but what it
 * teaches does not carry to that drill's recall: see the models README.)
 */
export function copyDrillInstance(random: SeededRandom, contextChars: number): CopyDrillInstance {
  const words = distinctPseudoWords(random, copyWordCount(contextChars), COPY_WORD_SYLLABLES);
  const queried = random.int(0, words.length - 2);
  const line = words.join(' ');
  const word = words[queried]!;
  const next = words[queried + 1]!;
  return {
    prompt: `${line}\n${line}\nwhat word follows ${word}?\n`,
    target: formatAnswer(next),
    word,
    next,
    words: words.length,
    contextLength: line.length,
  };
}
