import { formatAnswer } from './answer';
import { kvNeedleCount, NEEDLE_KEY_SYLLABLES, needleSentence } from './niah';
import type { SeededRandom } from './seeded';
import { distinctPseudoWords, randomDigits } from './words';

/** What a recitation drill is made of. */
export interface RecitationSpec {
  /** Longest needle line, in characters: as many needles as fit it (at least 2). */
  readonly contextChars: number;
  /** Digits of a value. */
  readonly valueDigits: number;
}

/** A generated recitation drill. */
export interface RecitationInstance {
  readonly prompt: string;
  readonly target: string;
  /** The queried key. */
  readonly key: string;
  /** Its value. */
  readonly value: string;
  /** Needles in the needle line, the queried one included. */
  readonly needles: number;
  /** Length of the needle line (the recitation line and the question follow it). */
  readonly contextLength: number;
}

/**
 * A recitation drill: a line made only of needles `the number for <key> is <value>.` with
 * distinct keys, then a line reciting every needle but the queried one in a fresh order, then
 * the question about the queried one. Prompt: needles, newline, recitation, newline,
 * `what is the number for <key>?`, newline; target: `answer: <value>.`
 *
 * Every recited value is recalled by its key from the needle line, so a model trained with the
 * loss on the prompt too meets an associative-recall target in each recited needle (Zoology's
 * multi-query associative recall, in the suite's needle form) instead of one per sequence; the
 * queried value is never recited, so the answer is recalled from the needle line alone. A
 * curriculum's first stone before `niah-multi`, not a test of memory.
 */
export function recitationInstance(random: SeededRandom, spec: RecitationSpec): RecitationInstance {
  const count = kvNeedleCount(spec.contextChars, spec.valueDigits);
  const keys = distinctPseudoWords(random, count, NEEDLE_KEY_SYLLABLES);
  const values = keys.map(() => randomDigits(random, spec.valueDigits));
  const needles = keys.map((key, i) => needleSentence(key, values[i]!));
  const queried = random.int(0, count - 1);
  const recited = random.shuffle(needles.filter((_, i) => i !== queried));
  const context = needles.join(' ');
  const key = keys[queried]!;
  const value = values[queried]!;
  return {
    prompt: `${context}\n${recited.join(' ')}\nwhat is the number for ${key}?\n`,
    target: formatAnswer(value),
    key,
    value,
    needles: count,
    contextLength: context.length,
  };
}
