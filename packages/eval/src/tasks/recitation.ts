import { formatAnswer } from './answer';
import { kvNeedleCount, NEEDLE_KEY_SYLLABLES, needleSentence } from './niah';
import type { SeededRandom } from './seeded';
import { distinctPseudoWords, randomDigits } from './words';

/** How a recitation drill's second line recites the needles (see {@link RecitationSpec}). */
export type RecitationOrder = 'shuffled' | 'same' | 'sampled';

/** What a recitation drill is made of. */
export interface RecitationSpec {
  /** Longest needle line, in characters: as many needles as fit it (at least 2). */
  readonly contextChars: number;
  /** Digits of a value. */
  readonly valueDigits: number;
  /**
   * `shuffled`: the recitation is in a fresh order (each recited value recalled by its key);
   * `same`: in the needle line's order (a verbatim repeat: every recited token follows the same
   * tokens as in the needle line, the pattern an induction head copies); `sampled`: needles drawn
   * with replacement from all of them, the queried one included, so no value can be told by
   * elimination (see {@link recitationInstance}).
   */
  readonly order: RecitationOrder;
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
 * distinct keys, then a line reciting every needle but the queried one (in a fresh order, or in
 * the same order), then the question about the queried one. Prompt: needles, newline, recitation, newline,
 * `what is the number for <key>?`, newline; target: `answer: <value>.`
 *
 * Every recited value is recalled by its key from the needle line, so a model trained with the
 * loss on the prompt too meets an associative-recall target in each recited needle (Zoology's
 * multi-query associative recall, in the suite's needle form) instead of one per sequence; the
 * queried value is never recited, so the answer is recalled from the needle line alone. In the
 * same order, the recitation is a verbatim repeat, which a previous-token head and an induction
 * head predict token by token: the stone before. A curriculum's stones before `niah-multi`, not
 * tests of memory.
 *
 * Both leave a shortcut: a recited value is one not recited yet, and the answer is the one value
 * never recited, so a model can narrow them by elimination without reading a key. With
 * `order: 'sampled'` the recitation line holds as many needles, each drawn uniformly with
 * replacement from all of them (the queried one included; the queried key is drawn uniformly
 * too): every value is as likely at every place whatever came before, so only its key tells it
 * (the answer is recalled from the needle line, or from the recitation where it was recited).
 */
export function recitationInstance(random: SeededRandom, spec: RecitationSpec): RecitationInstance {
  const count = kvNeedleCount(spec.contextChars, spec.valueDigits);
  const keys = distinctPseudoWords(random, count, NEEDLE_KEY_SYLLABLES);
  const values = keys.map(() => randomDigits(random, spec.valueDigits));
  const needles = keys.map((key, i) => needleSentence(key, values[i]!));
  const queried = random.int(0, count - 1);
  const recited = recitedNeedles(random, needles, queried, spec.order);
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

/** The recitation line's needles: all but the queried one, in order or shuffled, or drawn. */
function recitedNeedles(
  random: SeededRandom,
  needles: readonly string[],
  queried: number,
  order: RecitationOrder,
): string[] {
  if (order === 'sampled') {
    return Array.from(
      { length: needles.length - 1 },
      () => needles[random.int(0, needles.length - 1)]!,
    );
  }
  const others = needles.filter((_, i) => i !== queried);
  return order === 'same' ? others : random.shuffle(others);
}
