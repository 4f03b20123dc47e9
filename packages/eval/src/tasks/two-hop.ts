import { formatAnswer } from './answer';
import { fillerWithItems } from './haystack';
import { NEEDLE_KEY_SYLLABLES, needleLength, needleSentence } from './niah';
import type { SeededRandom } from './seeded';
import { distinctPseudoWords, distinctRandomDigits } from './words';

/** What a two-hop instance is made of. */
export interface TwoHopSpec {
  /** Longest context (filler with needles, before the question), in characters = tokens. */
  readonly contextChars: number;
  /** Chains `a → b → value`, one of them queried (the others are distractors). */
  readonly chains: number;
  /** Digits of a value. */
  readonly valueDigits: number;
  /**
   * `hidden`: the completion is the answer line alone (both hops inside one forward pass);
   * `written`: the completion first names the key it goes through, `via <b>` on a line of its
   * own, then the answer line (two lookups, the second keyed by a token the model wrote).
   */
  readonly route: TwoHopRoute;
}

/** Whether a two-hop completion writes the key it goes through (see {@link TwoHopSpec}). */
export type TwoHopRoute = 'hidden' | 'written';

/** The scratchpad line of a `written` route: the key the queried key's number is read from. */
export function viaLine(via: string): string {
  return `via ${via}`;
}

/** A generated two-hop instance. */
export interface TwoHopInstance {
  readonly prompt: string;
  readonly target: string;
  /** The queried key `a`. */
  readonly key: string;
  /** The key `b` whose number `a`'s is. */
  readonly via: string;
  /** The number of `b`, hence of `a` (the expected answer). */
  readonly value: string;
  /** Length of the context (the prompt before the question line). */
  readonly contextLength: number;
}

/**
 * How a link is worded: `number`, `the number for <a> is the number for <b>.` (`b` five tokens of
 * the suite's BPE after `a`); `possessive`, `the number for <a> is <b>'s.` (`b` two tokens after
 * `a`, about where a needle's value stands after its key: three).
 */
export type LinkForm = 'number' | 'possessive';

/** The link forms, default first. */
export const LINK_FORMS: readonly LinkForm[] = ['number', 'possessive'];

/** A link needle: `the number for <key> is the number for <via>.`, or `… is <via>'s.` */
export function linkSentence(key: string, via: string, form: LinkForm = 'number'): string {
  return form === 'possessive'
    ? `the number for ${key} is ${via}'s.`
    : `the number for ${key} is the number for ${via}.`;
}

/** Shortest context that holds every needle of `spec` (and the spaces between them). */
export function twoHopMinChars(spec: Pick<TwoHopSpec, 'chains' | 'valueDigits'>): number {
  const key = 'x'.repeat(2 * NEEDLE_KEY_SYLLABLES);
  const link = linkSentence(key, key).length + 1;
  return spec.chains * (link + needleLength(spec.valueDigits) + 1) - 1;
}

/**
 * Two-hop needle-in-a-haystack (after RULER's multi-hop tracing): `chains` pairs of needles
 * `the number for <a> is the number for <b>.` and `the number for <b> is <value>.` in random
 * order, scattered in filler sentences. Every key is distinct and defined by exactly one
 * needle, and the `b` keys have values, so the links form no cycle and every key has one
 * number; the chains' values are distinct, so a distractor chain never gives the answer.
 *
 * Prompt: the context, a newline, `what is the number for <a>?` (the `a` of one chain), a
 * newline. Target: `answer: <value>.` — the number of that chain's `b` —, after the line
 * `via <b>` when `route` is `written`.
 */
export function twoHopInstance(random: SeededRandom, spec: TwoHopSpec): TwoHopInstance {
  const keys = distinctPseudoWords(random, 2 * spec.chains, NEEDLE_KEY_SYLLABLES);
  const values = distinctRandomDigits(random, spec.chains, spec.valueDigits);
  const chains = values.map((value, c) => ({ key: keys[2 * c]!, via: keys[2 * c + 1]!, value }));
  const needles = random.shuffle(
    chains.flatMap(({ key, via, value }) => [linkSentence(key, via), needleSentence(via, value)]),
  );
  const context = fillerWithItems(random, spec.contextChars, needles);
  const queried = chains[random.int(0, spec.chains - 1)]!;
  return {
    prompt: `${context}\nwhat is the number for ${queried.key}?\n`,
    target:
      spec.route === 'written'
        ? `${viaLine(queried.via)}\n${formatAnswer(queried.value)}`
        : formatAnswer(queried.value),
    key: queried.key,
    via: queried.via,
    value: queried.value,
    contextLength: context.length,
  };
}
