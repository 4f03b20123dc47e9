import { formatAnswer } from './answer';
import { fillerUnits, placeNeedle } from './haystack';
import type { SeededRandom } from './seeded';
import { distinctPseudoWords, randomDigits } from './words';

/** Syllables of a needle key (keys are 4 letters). */
export const NEEDLE_KEY_SYLLABLES = 2;

/** What a needle-in-a-haystack instance is made of. */
export interface NiahSpec {
  /** Longest context (haystack with needles, before the question), in characters = tokens. */
  readonly contextChars: number;
  /** Where the queried needle goes: a fraction in [0, 1], or `random` (uniform per example). */
  readonly depth: number | 'random';
  /**
   * `filler`: noise sentences with `needles` needles in them (the queried one at `depth`, the
   * others at random places); `kv`: a context made only of needles with distinct keys.
   */
  readonly haystack: 'filler' | 'kv';
  /** Needles in a `filler` haystack (1 for single-key); ignored for `kv`. */
  readonly needles: number;
  /** Digits of a value. */
  readonly valueDigits: number;
}

/** A generated needle-in-a-haystack instance. */
export interface NiahInstance {
  readonly prompt: string;
  readonly target: string;
  /** The queried key. */
  readonly key: string;
  /** Its value. */
  readonly value: string;
  /** Needles in the context, the queried one included. */
  readonly needles: number;
  /** Requested depth (drawn when the spec says `random`). */
  readonly requestedDepth: number;
  /** Realised depth of the queried needle (see {@link placeNeedle}). */
  readonly depth: number;
  /** Offset of the queried needle in the prompt. */
  readonly needleStart: number;
  /** Length of the context (the prompt before the question line). */
  readonly contextLength: number;
}

/** A needle: `the number for <key> is <value>.` */
export function needleSentence(key: string, value: string): string {
  return `the number for ${key} is ${value}.`;
}

/** Length of every needle with `valueDigits`-digit values (keys all have the same length). */
export function needleLength(valueDigits: number): number {
  return needleSentence('x'.repeat(2 * NEEDLE_KEY_SYLLABLES), '0'.repeat(valueDigits)).length;
}

/** Needles that fill a `kv` haystack of `contextChars` characters. */
export function kvNeedleCount(contextChars: number, valueDigits: number): number {
  return Math.floor((contextChars + 1) / (needleLength(valueDigits) + 1));
}

/**
 * A RULER-style needle-in-a-haystack instance (single-key: one needle in filler; multi-key:
 * distractor needles with other keys in filler, or a context made only of needles).
 *
 * Prompt: the context, a newline, `what is the number for <key>?`, a newline. Target:
 * `answer: <value>.`
 */
export function niahInstance(random: SeededRandom, spec: NiahSpec): NiahInstance {
  const requestedDepth = spec.depth === 'random' ? random.int(0, 1000) / 1000 : spec.depth;
  const needleChars = needleLength(spec.valueDigits);
  const count =
    spec.haystack === 'kv' ? kvNeedleCount(spec.contextChars, spec.valueDigits) : spec.needles;
  const keys = distinctPseudoWords(random, count, NEEDLE_KEY_SYLLABLES);
  const values = keys.map(() => randomDigits(random, spec.valueDigits));
  const needles = keys.map((key, i) => needleSentence(key, values[i]!));
  const units =
    spec.haystack === 'kv'
      ? []
      : fillerUnits(random, spec.contextChars - count * (needleChars + 1));
  for (const distractor of needles.slice(1)) {
    units.splice(random.int(0, units.length), 0, distractor);
  }
  const haystack = placeNeedle(units, needles[0]!, requestedDepth);
  const key = keys[0]!;
  const value = values[0]!;
  return {
    prompt: `${haystack.text}\nwhat is the number for ${key}?\n`,
    target: formatAnswer(value),
    key,
    value,
    needles: count,
    requestedDepth,
    depth: haystack.depth,
    needleStart: haystack.needleStart,
    contextLength: haystack.text.length,
  };
}
