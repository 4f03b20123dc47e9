import { formatAnswer } from './answer';
import { kvNeedleCount, NEEDLE_KEY_SYLLABLES, needleLength, needleSentence } from './niah';
import type { SeededRandom } from './seeded';
import { type LinkForm, linkSentence, viaLine } from './two-hop';
import { distinctPseudoWords, distinctRandomDigits, randomDigits } from './words';

/** How a recitation drill's second line recites the needles (see {@link RecitationSpec}). */
export type RecitationOrder = 'shuffled' | 'same' | 'sampled';

/**
 * What a recitation drill's lines are made of (see {@link RecitationSpec}): value needles, or
 * `two-hop`'s chains (a link and the needle it points to).
 */
export type RecitationForm = 'needles' | 'chains';

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
  /**
   * `needles`: needles `the number for <key> is <value>.`; `chains`: `two-hop`'s chains, a link
   * `the number for <a> is the number for <b>.` and the needle of its `b`, every sentence of the
   * line shuffled, the question asking an `a` and answered `via <b>` then the value (see
   * {@link chainRecitationInstance}).
   */
  readonly form: RecitationForm;
  /** `chains` only: how a link is worded (`number`, or `possessive`: `… is <b>'s.`). */
  readonly link: LinkForm;
}

/** A generated recitation drill. */
export interface RecitationInstance {
  readonly prompt: string;
  readonly target: string;
  /** The queried key. */
  readonly key: string;
  /** Its value. */
  readonly value: string;
  /** `chains` only: the key `b` the queried `a` links to. */
  readonly via?: string;
  /** Keys defined in the needle line (needles; for `chains`, both keys of every chain). */
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
  if (spec.form === 'chains') return chainRecitationInstance(random, spec);
  const count = kvNeedleCount(spec.contextChars, spec.valueDigits);
  const keys = distinctPseudoWords(random, count, NEEDLE_KEY_SYLLABLES);
  const values = keys.map(() => randomDigits(random, spec.valueDigits));
  const needles = keys.map((key, i) => needleSentence(key, values[i]!));
  const queried = random.int(0, count - 1);
  const recited = recitedUnits(random, needles, [needles[queried]!], spec.order);
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

/** Chains that fit a needle line of `contextChars` (each a link and a needle, space-separated). */
export function recitationChainCount(
  contextChars: number,
  valueDigits: number,
  link: LinkForm = 'number',
): number {
  const key = 'x'.repeat(2 * NEEDLE_KEY_SYLLABLES);
  const chain = linkSentence(key, key, link).length + 1 + needleLength(valueDigits);
  return Math.floor((contextChars + 1) / (chain + 1));
}

/**
 * The recitation drill over `two-hop`'s chains: as many chains `a → b → value` as fit (distinct
 * keys, distinct values), their links `the number for <a> is the number for <b>.` (with `link:
 * 'possessive'`, `the number for <a> is <b>'s.`) and needles `the number for <b> is <value>.`
 * shuffled into one line; the recitation line as in the needle form, its units sentences (with
 * `sampled`, as many as the line holds but two, drawn with replacement; otherwise every sentence
 * but the queried chain's two); then `what is the number for <a>?`. Target: `via <b>`, newline, `answer: <value>.`, as `two-hop`
 * writes its route. Under a loss on the prompt every recited link is the lookup `two-hop`'s
 * first hop makes (a key found, the key after it copied) and every recited needle its second.
 */
export function chainRecitationInstance(
  random: SeededRandom,
  spec: RecitationSpec,
): RecitationInstance {
  const count = recitationChainCount(spec.contextChars, spec.valueDigits, spec.link);
  const keys = distinctPseudoWords(random, 2 * count, NEEDLE_KEY_SYLLABLES);
  const values = distinctRandomDigits(random, count, spec.valueDigits);
  const chains = values.map((value, c) => ({ key: keys[2 * c]!, via: keys[2 * c + 1]!, value }));
  const { key, via, value } = chains[random.int(0, count - 1)]!;
  const own = [linkSentence(key, via, spec.link), needleSentence(via, value)];
  const sentences = random.shuffle(
    chains.flatMap((chain) => [
      linkSentence(chain.key, chain.via, spec.link),
      needleSentence(chain.via, chain.value),
    ]),
  );
  const recited = recitedUnits(random, sentences, own, spec.order);
  const context = sentences.join(' ');
  return {
    prompt: `${context}\n${recited.join(' ')}\nwhat is the number for ${key}?\n`,
    target: `${viaLine(via)}\n${formatAnswer(value)}`,
    key,
    value,
    via,
    needles: 2 * count,
    contextLength: context.length,
  };
}

/**
 * A recitation line's units: as many as `units` holds but `own` (the queried units), drawn with
 * replacement from all of them (`sampled`), or every unit but `own`, in order or shuffled.
 */
function recitedUnits(
  random: SeededRandom,
  units: readonly string[],
  own: readonly string[],
  order: RecitationOrder,
): string[] {
  if (order === 'sampled') {
    return Array.from(
      { length: units.length - own.length },
      () => units[random.int(0, units.length - 1)]!,
    );
  }
  const others = units.filter((unit) => !own.includes(unit));
  return order === 'same' ? others : random.shuffle(others);
}
