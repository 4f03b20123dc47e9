import { formatAnswer } from './answer';
import type { SeededRandom } from './seeded';
import { distinctPseudoWords, randomDigits } from './words';

/** Syllables of an MQAR key (keys are 4 letters). */
export const MQAR_KEY_SYLLABLES = 2;

/** What a multi-query associative recall instance is made of. */
export interface MqarSpec {
  /** Key–value pairs in the context (distinct keys). */
  readonly keys: number;
  /** Keys queried (distinct, at most `keys`). */
  readonly queries: number;
  /** Digits of a value (values may repeat across keys). */
  readonly valueDigits: number;
}

/** A generated MQAR instance. */
export interface MqarInstance {
  readonly prompt: string;
  readonly target: string;
  /** The context's pairs, in order. */
  readonly pairs: readonly (readonly [string, string])[];
  /** The queried keys, in query order. */
  readonly queries: readonly string[];
  /** Their values, in query order (the expected answer). */
  readonly values: readonly string[];
}

/**
 * Multi-query associative recall (Zoology's MQAR, in text): `keys` pairs `key:value`
 * separated by spaces, then a line `query: <k1> <k2> …` with `queries` distinct keys in random
 * order. Target: `answer: <v1> <v2> ….` (the values in query order).
 */
export function mqarInstance(random: SeededRandom, spec: MqarSpec): MqarInstance {
  const keys = distinctPseudoWords(random, spec.keys, MQAR_KEY_SYLLABLES);
  const pairs = keys.map((key) => [key, randomDigits(random, spec.valueDigits)] as const);
  const asked = random.sample(pairs, spec.queries);
  const queries = asked.map(([key]) => key);
  const values = asked.map(([, value]) => value);
  const context = pairs.map(([key, value]) => `${key}:${value}`).join(' ');
  return {
    prompt: `${context}\nquery: ${queries.join(' ')}\n`,
    target: formatAnswer(values.join(' ')),
    pairs,
    queries,
    values,
  };
}

/** Length of an MQAR context (pairs and spaces) for `spec`: every pair has the same length. */
export function mqarContextLength(spec: MqarSpec): number {
  return spec.keys * (2 * MQAR_KEY_SYLLABLES + 1 + spec.valueDigits) + spec.keys - 1;
}
