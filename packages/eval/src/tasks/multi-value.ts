import { formatAnswer } from './answer';
import { fillerWithItems } from './haystack';
import { NEEDLE_KEY_SYLLABLES, needleLength, needleSentence } from './niah';
import type { SeededRandom } from './seeded';
import { distinctPseudoWords, distinctRandomDigits, randomDigits } from './words';

/** What a multi-value needle-in-a-haystack instance is made of. */
export interface MultiValueSpec {
  /** Longest context (filler with needles, before the question), in characters = tokens. */
  readonly contextChars: number;
  /** Distinct keys with needles, the queried one included (the others have one needle each). */
  readonly keys: number;
  /** Needles of the queried key, with distinct values. */
  readonly values: number;
  /** Digits of a value. */
  readonly valueDigits: number;
}

/** A generated multi-value instance. */
export interface MultiValueInstance {
  readonly prompt: string;
  readonly target: string;
  /** The queried key. */
  readonly key: string;
  /** Its values in the order they appear in the context (the expected answer). */
  readonly values: readonly string[];
  /** Length of the context (the prompt before the question line). */
  readonly contextLength: number;
}

/** Needles of a multi-value instance: the queried key's values plus one per distractor key. */
export function multiValueNeedleCount(spec: Pick<MultiValueSpec, 'keys' | 'values'>): number {
  return spec.values + spec.keys - 1;
}

/** Shortest context that holds every needle of `spec` (needles and the spaces between them). */
export function multiValueMinChars(spec: Omit<MultiValueSpec, 'contextChars'>): number {
  return multiValueNeedleCount(spec) * (needleLength(spec.valueDigits) + 1) - 1;
}

/**
 * RULER's multi-value needle-in-a-haystack: the queried key has `values` needles
 * `the number for <key> is <value>.` with distinct values, scattered in filler sentences
 * together with one needle for each of the `keys - 1` distractor keys.
 *
 * Prompt: the context, a newline, `what are all the numbers for <key>?`, a newline. Target:
 * `answer: <v1> <v2> ….` — the key's values in the order they appear in the context.
 */
export function multiValueInstance(random: SeededRandom, spec: MultiValueSpec): MultiValueInstance {
  const [key, ...others] = distinctPseudoWords(random, spec.keys, NEEDLE_KEY_SYLLABLES);
  const queried = distinctRandomDigits(random, spec.values, spec.valueDigits);
  const needles = [
    ...queried.map((value) => ({ key: key!, value })),
    ...others.map((other) => ({ key: other, value: randomDigits(random, spec.valueDigits) })),
  ];
  const ordered = random.shuffle(needles);
  const context = fillerWithItems(
    random,
    spec.contextChars,
    ordered.map((needle) => needleSentence(needle.key, needle.value)),
  );
  const values = ordered.filter((needle) => needle.key === key).map((needle) => needle.value);
  return {
    prompt: `${context}\nwhat are all the numbers for ${key}?\n`,
    target: formatAnswer(values.join(' ')),
    key: key!,
    values,
    contextLength: context.length,
  };
}
