import { LetheError } from '@lethe/core';
import type { SeededRandom } from './seeded';

const CONSONANTS = 'bdfgklmnprstvz';
const VOWELS = 'aeiou';

/** Number of distinct consonant–vowel syllables of {@link pseudoWord}. */
export const SYLLABLE_COUNT = CONSONANTS.length * VOWELS.length;

/**
 * A pronounceable lower-case pseudo-word of `syllables` consonant–vowel syllables (e.g.
 * `bado`, `kemitu`): keys of retrieval tasks, names of the language-modelling corpus. There are
 * {@link SYLLABLE_COUNT}`^syllables` of them, all of length `2 * syllables`.
 */
export function pseudoWord(random: SeededRandom, syllables: number): string {
  let word = '';
  for (let i = 0; i < syllables; i++) {
    word += CONSONANTS[random.int(0, CONSONANTS.length - 1)]!;
    word += VOWELS[random.int(0, VOWELS.length - 1)]!;
  }
  return word;
}

/**
 * `count` distinct pseudo-words of `syllables` syllables, in draw order, none of them in
 * `exclude`.
 *
 * @throws LetheError `E_ARG` (argument `count`) when `count` exceeds half of the distinct
 *   words there are (beyond that, drawing without repeats would crawl).
 */
export function distinctPseudoWords(
  random: SeededRandom,
  count: number,
  syllables: number,
  exclude: ReadonlySet<string> = new Set(),
): string[] {
  const available = SYLLABLE_COUNT ** syllables - exclude.size;
  if (count > available / 2) {
    throw new LetheError(
      'E_ARG',
      `${count} distinct ${syllables}-syllable words requested, at most ${Math.floor(available / 2)}`,
      'count',
    );
  }
  const seen = new Set<string>();
  const out: string[] = [];
  while (out.length < count) {
    const word = pseudoWord(random, syllables);
    if (seen.has(word) || exclude.has(word)) continue;
    seen.add(word);
    out.push(word);
  }
  return out;
}

/** A random decimal string of `digits` digits whose first digit is not 0 (e.g. `4821`). */
export function randomDigits(random: SeededRandom, digits: number): string {
  let text = String(random.int(1, 9));
  for (let i = 1; i < digits; i++) text += String(random.int(0, 9));
  return text;
}

/** How many `digits`-digit values {@link randomDigits} can draw (no leading 0). */
export function digitValueCount(digits: number): number {
  return 9 * 10 ** (digits - 1);
}

/**
 * `count` distinct {@link randomDigits} values, in draw order.
 *
 * @throws LetheError `E_ARG` (argument `count`) when `count` exceeds half of the values there
 *   are (beyond that, drawing without repeats would crawl).
 */
export function distinctRandomDigits(
  random: SeededRandom,
  count: number,
  digits: number,
): string[] {
  const available = digitValueCount(digits);
  if (count > available / 2) {
    throw new LetheError(
      'E_ARG',
      `${count} distinct ${digits}-digit values requested, at most ${Math.floor(available / 2)}`,
      'count',
    );
  }
  const seen = new Set<string>();
  const out: string[] = [];
  while (out.length < count) {
    const value = randomDigits(random, digits);
    if (seen.has(value)) continue;
    seen.add(value);
    out.push(value);
  }
  return out;
}
