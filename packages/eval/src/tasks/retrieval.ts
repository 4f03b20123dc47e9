import { LetheError } from '@lethe/core';
import { finalAnswer, formatAnswer, STOP_TEXT } from './answer';
import { COPY_WORD_SYLLABLES, copyDrillInstance, copyWordCount } from './copy-drill';
import {
  FREQUENT_WORD_SYLLABLES,
  frequentWordCounts,
  frequentWordsInstance,
} from './frequent-words';
import { mqarContextLength, mqarInstance } from './mqar';
import { multiValueInstance, multiValueMinChars } from './multi-value';
import {
  kvNeedleCount,
  NEEDLE_KEY_SYLLABLES,
  type NiahSpec,
  needleLength,
  niahInstance,
} from './niah';
import { choiceOption, intOption, numberOption, optionFields } from './options';
import {
  type RecitationForm,
  type RecitationOrder,
  recitationChainCount,
  recitationInstance,
} from './recitation';
import { SeededRandom } from './seeded';
import type { GenerationTask, TaskExample, Verdict } from './task';
import { taskTokenizer } from './tokenizers';
import {
  LINK_FORMS,
  type LinkForm,
  type TwoHopRoute,
  twoHopInstance,
  twoHopMinChars,
  viaLine,
} from './two-hop';
import {
  VARIABLE_NAME_SYLLABLES,
  type VariableHaystack,
  type VariableQuery,
  variableRoute,
  variableTrackingInstance,
  variableTrackingMinChars,
} from './variable-tracking';
import { digitValueCount } from './words';

/** The retrieval variants. */
export const RETRIEVAL_VARIANTS = [
  'niah-single',
  'niah-multi',
  'mqar',
  'niah-multivalue',
  'variable-tracking',
  'frequent-words',
  'two-hop',
  'recitation',
  'copy',
] as const;

/** A retrieval variant. */
export type RetrievalVariant = (typeof RETRIEVAL_VARIANTS)[number];

/** Most keys of a retrieval instance (keys are distinct 4-letter pseudo-words). */
export const MAX_RETRIEVAL_KEYS = 2000;

/** Options of the single-key needle-in-a-haystack variant. */
export interface NiahSingleOptions {
  readonly variant: 'niah-single';
  /** Longest context before the question, in characters = tokens (default 1024). */
  readonly contextChars: number;
  /** Depth of the needle: a fraction in [0, 1] or `random` per example (default). */
  readonly depth: number | 'random';
  /** Digits of the value (default 4). */
  readonly valueDigits: number;
}

/** Options of the multi-key needle-in-a-haystack variant. */
export interface NiahMultiOptions {
  readonly variant: 'niah-multi';
  readonly contextChars: number;
  /** Depth of the queried needle (the distractors go anywhere). */
  readonly depth: number | 'random';
  /**
   * `filler` (default): noise sentences with `keys` needles; `kv`: a context made only of
   * needles with distinct keys, as many as fit `contextChars`.
   */
  readonly haystack: 'filler' | 'kv';
  /** Needles in the context, the queried one included (default 4; derived for `kv`). */
  readonly keys: number;
  readonly valueDigits: number;
}

/** Options of the multi-query associative recall variant. */
export interface MqarOptions {
  readonly variant: 'mqar';
  /** Key–value pairs (default 16). */
  readonly keys: number;
  /** Keys queried (default 4). */
  readonly queries: number;
  /** Digits of a value (default 2). */
  readonly valueDigits: number;
}

/** Options of the multi-value needle-in-a-haystack variant. */
export interface NiahMultiValueOptions {
  readonly variant: 'niah-multivalue';
  readonly contextChars: number;
  /** Distinct keys with needles, the queried one included (default 1: no distractors). */
  readonly keys: number;
  /** Needles of the queried key, with distinct values (default 4). */
  readonly values: number;
  /** Digits of a value (default 4). */
  readonly valueDigits: number;
}

/** Options of the variable-tracking variant. */
export interface VariableTrackingOptions {
  readonly variant: 'variable-tracking';
  readonly contextChars: number;
  /** Chains of assignments, one queried (default 4). */
  readonly chains: number;
  /** Variable-to-variable assignments per chain, `hops + 1` variables (default 4). */
  readonly hops: number;
  /** Digits of a chain's value (default 5). */
  readonly valueDigits: number;
  /** The assignments in filler (`filler`, default) or alone (`none`: a drill). */
  readonly haystack: VariableHaystack;
  /** Answered questions on distinct chains before the asked one (default 0, at most `chains`). */
  readonly recited: number;
  /**
   * What the question names: a chain's value, answered by its variables (`holders`, default,
   * RULER's), or its last variable, answered by its value after the written route (`value`).
   */
  readonly query: VariableQuery;
}

/** Options of the frequent-words variant. */
export interface FrequentWordsOptions {
  readonly variant: 'frequent-words';
  readonly contextChars: number;
  /** Most frequent words asked for (default 3). */
  readonly top: number;
  /** Zipf exponent of the word counts (default 1). */
  readonly alpha: number;
}

/** Options of the two-hop variant. */
export interface TwoHopOptions {
  readonly variant: 'two-hop';
  readonly contextChars: number;
  /** Chains `a → b → value`, one queried (default 4). */
  readonly chains: number;
  /** Digits of a value (default 4). */
  readonly valueDigits: number;
  /** Whether the completion writes `via <b>` before its answer (default `hidden`: it does not). */
  readonly route: TwoHopRoute;
}

/** Options of the recitation drill (a curriculum's stepping stone, see {@link recitationInstance}). */
export interface RecitationOptions {
  readonly variant: 'recitation';
  /** Longest needle line, in characters: as many needles as fit it (default 1024, at least 2). */
  readonly contextChars: number;
  /** Digits of a value (default 4). */
  readonly valueDigits: number;
  /**
   * The recitation's order: `shuffled` (default), `same` (a verbatim repeat) or `sampled`
   * (needles drawn with replacement: no value told by elimination).
   */
  readonly order: RecitationOrder;
  /**
   * `needles` (default): value needles; `chains`: `two-hop`'s chains, each a link and the needle
   * it points to, answered `via <b>` then the value.
   */
  readonly form: RecitationForm;
  /**
   * `chains` only: how a link is worded, `number` (default: `the number for <a> is the number
   * for <b>.`, as `two-hop` words it) or `possessive` (`the number for <a> is <b>'s.`).
   */
  readonly link: LinkForm;
}

/** Options of the copy drill (a training drill, see {@link copyDrillInstance}). */
export interface CopyOptions {
  readonly variant: 'copy';
  /** Longest line of words, in characters: as many words as fit it (default 1024). */
  readonly contextChars: number;
}

/** Resolved options of the retrieval task: one of the variants. */
export type RetrievalOptions =
  | NiahSingleOptions
  | NiahMultiOptions
  | MqarOptions
  | NiahMultiValueOptions
  | VariableTrackingOptions
  | FrequentWordsOptions
  | TwoHopOptions
  | RecitationOptions
  | CopyOptions;

/** Options accepted by {@link retrievalTask} (fields of the chosen variant only). */
export interface RetrievalOptionsInput {
  /** Default `niah-single`. */
  readonly variant?: RetrievalVariant;
  readonly contextChars?: number;
  readonly depth?: number | 'random';
  readonly haystack?: 'filler' | 'kv' | 'none';
  readonly keys?: number;
  readonly queries?: number;
  readonly valueDigits?: number;
  readonly values?: number;
  readonly chains?: number;
  readonly hops?: number;
  readonly top?: number;
  readonly alpha?: number;
  readonly order?: RecitationOrder;
  readonly form?: RecitationForm;
  readonly link?: LinkForm;
  readonly route?: TwoHopRoute;
  readonly recited?: number;
  readonly query?: VariableQuery;
}

/** Ground truth of a retrieval example (its `data`). */
export type RetrievalData = {
  readonly variant: RetrievalVariant;
  /**
   * What each expected value answers, in order: the queried keys (`niah-*`, `mqar`, `two-hop`,
   * `recitation`; `copy`: the queried word;
   * `niah-multivalue` repeats its key once per value), the queried value once per variable
   * (`variable-tracking`), or `rank 1`, `rank 2`, … (`frequent-words`).
   */
  readonly queries: readonly string[];
  /** The expected answer, in order: values, variable names or words (`copy`: the next word). */
  readonly values: readonly string[];
  /**
   * Keys in the context (needles or pairs; for `variable-tracking` the variables, for
   * `frequent-words` and `copy` the distinct words, for `two-hop` both keys of every chain).
   */
  readonly keys: number;
  /**
   * Length of the context before the question line (`recitation`: of the needle line, which the
   * recitation line follows; `copy`: of the line, which its copy follows).
   */
  readonly contextLength: number;
  /** NIAH only: requested depth (drawn when `random`). */
  readonly requestedDepth?: number;
  /** NIAH only: realised depth of the queried needle. */
  readonly depth?: number;
  /** NIAH only: character offset of the queried needle in the prompt. */
  readonly needleStart?: number;
  /**
   * The route a written completion goes through: `two-hop`'s key whose number the queried key's
   * is; `variable-tracking` asked for a value: the variables from the asked one's source back to
   * the chain's first, space-separated.
   */
  readonly via?: string;
  /** `frequent-words` only: occurrences of the expected words, then of the next word. */
  readonly counts?: readonly number[];
};

/**
 * Retrieval tasks, RULER-style:
 *
 * - `niah-single`: one needle `the number for <key> is <value>.` hidden at a chosen depth in
 *   filler sentences; the question asks for its value.
 * - `niah-multi`: the same with distractor needles (other keys) — in filler (`haystack:
 *   'filler'`, `keys` needles) or as the whole context (`haystack: 'kv'`).
 * - `mqar`: multi-query associative recall: `keys` pairs `key:value`, then several queried keys;
 *   the answer lists their values in query order.
 * - `niah-multivalue`: the queried key has `values` needles (distinct values) scattered in
 *   filler, with one needle for each of `keys - 1` distractor keys; the answer lists the key's
 *   values in the order they appear.
 * - `variable-tracking`: `chains` interleaved chains `var x0 is <value>.`, `var x1 is x0.`, …
 *   (`hops` links, `hops + 1` variables) in filler; the question names one chain's value and
 *   the answer lists that chain's variables in order — or, with `query: 'value'`, it names the
 *   chain's last variable and the completion writes `via <x<hops-1>> … <x0>`, then the value.
 * - `frequent-words`: a context of 4-letter pseudo-words with Zipf-like counts (exponent
 *   `alpha`), the `top` most frequent set apart by at least 2 occurrences; the answer lists
 *   them, most frequent first.
 * - `two-hop`: `chains` pairs of needles `the number for <a> is the number for <b>.` and
 *   `the number for <b> is <value>.` in filler; the question asks for one chain's `a`. With
 *   `route: 'written'` the completion names `b` on a line `via <b>` before the answer line.
 * - `recitation`: a curriculum's stepping stone, not a test: a line of needles with distinct
 *   keys, a line reciting all but the queried one in a fresh order (`order: 'shuffled'`) or in
 *   the same order (`'same'`: a verbatim repeat), or as many needles drawn with replacement
 *   (`'sampled'`: no value told by elimination), then the question (an associative-recall or
 *   copy target in every recited needle when the loss falls on the prompt); with `form:
 *   'chains'` its lines hold `two-hop`'s chains (links and the needles they point to) and the
 *   completion writes `via <b>` before the answer line.
 * - `copy`: a training drill too: a line of distinct 4-letter pseudo-words, the same line again,
 *   then `what word follows <word>?` (every token of the copy an induction target).
 *
 * Defaults: `contextChars` 1024 and `valueDigits` 4 everywhere except `variable-tracking`
 * (`valueDigits` 5); `niah-multivalue` `keys` 1, `values` 4; `variable-tracking` `chains` 4,
 * `hops` 4, `query` `holders`; `frequent-words` `top` 3, `alpha` 1; `two-hop` `chains` 4, `route` `hidden`.
 *
 * Format (`niah-single` with `contextChars: 160, depth: 0.5`; `mqar` with `keys: 4,
 * queries: 2`; seed 0, index 0):
 * ```
 * prompt:  birds sing in the morning. the sun is yellow. snow falls on the hills. the number
 *          for nolo is 3430. the sun is yellow. the night is dark and quiet.\nwhat is the
 *          number for nolo?\n
 * target:  answer: 3430.
 * prompt:  gofe:84 lanu:70 nude:22 dodi:94\nquery: dodi lanu\n
 * target:  answer: 94 70.
 * ```
 * The newer variants at `contextChars: 160` (`variable-tracking` with `chains: 2, hops: 2`,
 * `two-hop` with `chains: 2`) and `frequent-words` at `contextChars: 120`:
 * ```
 * prompt:  the number for zatu is 7692. the grass is green. the number for zatu is 8671. the
 *          number for zatu is 3269. the number for zatu is 5897.\nwhat are all the numbers
 *          for zatu?\n
 * target:  answer: 7692 8671 3269 5897.
 * prompt:  var luko is 81142. var tibi is 60726. var popo is luko. var dume is popo. the river
 *          runs to the sea. var ramo is tibi. var pari is ramo.\nwhich variables hold 81142?\n
 * target:  answer: luko popo dume.
 * prompt:  mefa mefa sido zupe zati mefa zati zati mefa sido mefa mefa mefa zati sido sido mefa
 *          zupe dike sido mefa dota sido dike\nwhat are the 3 most frequent words in order of
 *          frequency?\n
 * target:  answer: mefa sido zati.
 * prompt:  the number for zaze is the number for rode. the number for rode is 4242. the number
 *          for nati is 9537. the number for luka is the number for nati.\nwhat is the number
 *          for luka?\n
 * target:  answer: 9537.
 * ```
 * Context lengths are in characters, which are the tokens of the task's tokenizer. The
 * verifier compares the final `answer:` line's whitespace-separated values exactly.
 *
 * @throws LetheError `E_ARG` naming the field for a bad option.
 */
export function retrievalTask(options?: RetrievalOptionsInput): GenerationTask<RetrievalOptions> {
  const resolved = resolveRetrievalOptions(options);
  const tokenizer = taskTokenizer('retrieval');
  const stream = `retrieval/${resolved.variant}`;

  const example = (seed: number, index: number): TaskExample => {
    const random = SeededRandom.forExample(stream, seed, index);
    const { prompt, target, data } = retrievalInstance(random, resolved);
    return { task: 'retrieval', seed, index, prompt, target, data };
  };

  return {
    kind: 'generation',
    name: 'retrieval',
    options: resolved,
    tokenizer,
    maxNewTokens: longestCompletion(resolved).length,
    stopText: STOP_TEXT,
    example,
    verify: verifyRetrieval,
  };
}

/** A generated retrieval instance with its ground truth. */
interface RetrievalInstance {
  readonly prompt: string;
  readonly target: string;
  readonly data: RetrievalData;
}

function retrievalInstance(random: SeededRandom, resolved: RetrievalOptions): RetrievalInstance {
  const { variant } = resolved;
  switch (resolved.variant) {
    case 'mqar': {
      const instance = mqarInstance(random, resolved);
      return {
        ...instance,
        data: {
          variant,
          queries: instance.queries,
          values: instance.values,
          keys: instance.pairs.length,
          contextLength: mqarContextLength(resolved),
        },
      };
    }
    case 'niah-multivalue': {
      const instance = multiValueInstance(random, resolved);
      return {
        ...instance,
        data: {
          variant,
          queries: instance.values.map(() => instance.key),
          values: instance.values,
          keys: resolved.keys,
          contextLength: instance.contextLength,
        },
      };
    }
    case 'variable-tracking': {
      const instance = variableTrackingInstance(random, resolved);
      const { value, variables } = instance;
      const common = {
        variant,
        keys: instance.variableCount,
        contextLength: instance.contextLength,
      };
      const data: RetrievalData =
        resolved.query === 'holders'
          ? { ...common, queries: variables.map(() => value), values: variables }
          : {
              ...common,
              queries: [variables.at(-1)!],
              values: [value],
              via: variableRoute(variables),
            };
      return { prompt: instance.prompt, target: instance.target, data };
    }
    case 'frequent-words': {
      const instance = frequentWordsInstance(random, {
        ...resolved,
        maxWords: MAX_RETRIEVAL_KEYS,
      });
      return {
        ...instance,
        data: {
          variant,
          queries: instance.words.map((_, r) => `rank ${r + 1}`),
          values: instance.words,
          keys: instance.vocabulary,
          contextLength: instance.contextLength,
          counts: instance.counts,
        },
      };
    }
    case 'recitation': {
      const instance = recitationInstance(random, resolved);
      return {
        ...instance,
        data: {
          variant,
          queries: [instance.key],
          values: [instance.value],
          keys: instance.needles,
          contextLength: instance.contextLength,
          ...(instance.via === undefined ? {} : { via: instance.via }),
        },
      };
    }
    case 'copy': {
      const instance = copyDrillInstance(random, resolved.contextChars);
      return {
        ...instance,
        data: {
          variant,
          queries: [instance.word],
          values: [instance.next],
          keys: instance.words,
          contextLength: instance.contextLength,
        },
      };
    }
    case 'two-hop': {
      const instance = twoHopInstance(random, resolved);
      return {
        ...instance,
        data: {
          variant,
          queries: [instance.key],
          values: [instance.value],
          keys: 2 * resolved.chains,
          contextLength: instance.contextLength,
          via: instance.via,
        },
      };
    }
    default: {
      const spec: NiahSpec =
        resolved.variant === 'niah-single'
          ? { ...resolved, haystack: 'filler', needles: 1 }
          : { ...resolved, needles: resolved.keys };
      const instance = niahInstance(random, spec);
      return {
        ...instance,
        data: {
          variant,
          queries: [instance.key],
          values: [instance.value],
          keys: instance.needles,
          contextLength: instance.contextLength,
          requestedDepth: instance.requestedDepth,
          depth: instance.depth,
          needleStart: instance.needleStart,
        },
      };
    }
  }
}

/** The longest completion of a variant (its `maxNewTokens` is that completion's length). */
function longestCompletion(resolved: RetrievalOptions): string {
  const answer = formatAnswer(longestAnswer(resolved));
  const route = longestRoute(resolved);
  return route === undefined ? answer : `${viaLine(route)}\n${answer}`;
}

/** The longest route a variant's completion writes before its answer line, if it writes one. */
function longestRoute(resolved: RetrievalOptions): string | undefined {
  if (
    (resolved.variant === 'two-hop' && resolved.route === 'written') ||
    (resolved.variant === 'recitation' && resolved.form === 'chains')
  ) {
    return 'x'.repeat(2 * NEEDLE_KEY_SYLLABLES);
  }
  if (resolved.variant === 'variable-tracking' && resolved.query === 'value') {
    const name = 'x'.repeat(2 * VARIABLE_NAME_SYLLABLES);
    return Array.from({ length: resolved.hops }, () => name).join(' ');
  }
  return undefined;
}

/** The longest answer text of a variant (what follows `answer:` in its longest completion). */
function longestAnswer(resolved: RetrievalOptions): string {
  const repeat = (count: number, item: string): string =>
    Array.from({ length: count }, () => item).join(' ');
  switch (resolved.variant) {
    case 'mqar':
      return repeat(resolved.queries, '9'.repeat(resolved.valueDigits));
    case 'niah-multivalue':
      return repeat(resolved.values, '9'.repeat(resolved.valueDigits));
    case 'variable-tracking':
      return resolved.query === 'holders'
        ? repeat(resolved.hops + 1, 'x'.repeat(2 * VARIABLE_NAME_SYLLABLES))
        : '9'.repeat(resolved.valueDigits);
    case 'frequent-words':
      return repeat(resolved.top, 'x'.repeat(2 * FREQUENT_WORD_SYLLABLES));
    case 'copy':
      return 'x'.repeat(2 * COPY_WORD_SYLLABLES);
    default:
      return '9'.repeat(resolved.valueDigits);
  }
}

/**
 * Verifies a retrieval completion: the final `answer:` line must list exactly the expected
 * values, in order, separated by whitespace. Never throws.
 */
export function verifyRetrieval(example: TaskExample, completion: string): Verdict {
  const data = example.data as Partial<RetrievalData>;
  const { queries, values } = data;
  if (
    !Array.isArray(values) ||
    !Array.isArray(queries) ||
    values.length !== queries.length ||
    !values.every((v) => typeof v === 'string')
  ) {
    return { correct: false, reason: 'example has no retrieval data' };
  }
  const answer = finalAnswer(completion, STOP_TEXT);
  if (!answer.ok) return { correct: false, reason: answer.reason };
  const given = answer.text.split(/\s+/);
  if (given.length !== values.length) {
    return {
      correct: false,
      reason: `expected ${values.length} value${values.length === 1 ? '' : 's'}, got ${given.length}`,
    };
  }
  for (let i = 0; i < values.length; i++) {
    if (given[i] !== values[i]) {
      return {
        correct: false,
        reason: `wrong value for ${String(queries[i])}: got ${given[i]}, expected ${values[i]}`,
      };
    }
  }
  return { correct: true };
}

const FIELDS: Record<RetrievalVariant, readonly string[]> = {
  'niah-single': ['variant', 'contextChars', 'depth', 'valueDigits'],
  'niah-multi': ['variant', 'contextChars', 'depth', 'haystack', 'keys', 'valueDigits'],
  mqar: ['variant', 'keys', 'queries', 'valueDigits'],
  'niah-multivalue': ['variant', 'contextChars', 'keys', 'values', 'valueDigits'],
  'variable-tracking': [
    'variant',
    'contextChars',
    'chains',
    'hops',
    'valueDigits',
    'haystack',
    'recited',
    'query',
  ],
  'frequent-words': ['variant', 'contextChars', 'top', 'alpha'],
  'two-hop': ['variant', 'contextChars', 'chains', 'valueDigits', 'route'],
  recitation: ['variant', 'contextChars', 'valueDigits', 'order', 'form', 'link'],
  copy: ['variant', 'contextChars'],
};

function resolveRetrievalOptions(options: unknown): RetrievalOptions {
  const raw = optionFields(options, [...new Set(Object.values(FIELDS).flat())], 'retrieval');
  const variant = choiceOption(raw, 'variant', 'niah-single', RETRIEVAL_VARIANTS);
  const fields = optionFields(raw, FIELDS[variant], `retrieval (${variant})`);
  if (variant === 'mqar') {
    const keys = intOption(fields, 'keys', 16, 1, MAX_RETRIEVAL_KEYS);
    const queries = intOption(fields, 'queries', Math.min(4, keys), 1, keys);
    const valueDigits = intOption(fields, 'valueDigits', 2, 1, 9);
    return { variant, keys, queries, valueDigits };
  }
  const contextChars = intOption(fields, 'contextChars', 1024, 16, 10_000_000);
  switch (variant) {
    case 'niah-multivalue':
      return multiValueOptions(fields, contextChars);
    case 'variable-tracking':
      return variableTrackingOptions(fields, contextChars);
    case 'frequent-words':
      return frequentWordsOptions(fields, contextChars);
    case 'two-hop':
      return twoHopOptions(fields, contextChars);
    case 'recitation':
      return recitationOptions(fields, contextChars);
    case 'copy':
      return copyOptions(contextChars);
  }
  const depth = depthOption(fields.depth);
  const valueDigits = intOption(fields, 'valueDigits', 4, 1, 9);
  const needle = needleLength(valueDigits);
  if (variant === 'niah-single') {
    if (contextChars < needle) {
      throw new LetheError('E_ARG', `must be at least the needle length ${needle}`, 'contextChars');
    }
    return { variant, contextChars, depth, valueDigits };
  }
  const haystack = choiceOption(fields, 'haystack', 'filler', ['filler', 'kv'] as const);
  if (haystack === 'kv') {
    if (fields.keys !== undefined) {
      throw new LetheError(
        'E_ARG',
        'is derived from contextChars when haystack is "kv" (leave it out)',
        'keys',
      );
    }
    const keys = kvNeedleCount(contextChars, valueDigits);
    if (keys < 2 || keys > MAX_RETRIEVAL_KEYS) {
      throw new LetheError(
        'E_ARG',
        `holds ${keys} needles of ${needle} characters; a kv haystack needs 2 to ${MAX_RETRIEVAL_KEYS}`,
        'contextChars',
      );
    }
    return { variant, contextChars, depth, haystack, keys, valueDigits };
  }
  const keys = intOption(fields, 'keys', 4, 2, MAX_RETRIEVAL_KEYS);
  if (contextChars < keys * (needle + 1)) {
    throw new LetheError(
      'E_ARG',
      `must hold ${keys} needles of ${needle} characters (at least ${keys * (needle + 1)})`,
      'contextChars',
    );
  }
  return { variant, contextChars, depth, haystack, keys, valueDigits };
}

type Fields = Readonly<Record<string, unknown>>;

function multiValueOptions(fields: Fields, contextChars: number): NiahMultiValueOptions {
  const keys = intOption(fields, 'keys', 1, 1, MAX_RETRIEVAL_KEYS);
  const values = intOption(fields, 'values', 4, 2, MAX_RETRIEVAL_KEYS);
  const valueDigits = intOption(fields, 'valueDigits', 4, 1, 9);
  checkDistinctValues(values, valueDigits, 'values');
  const options = { variant: 'niah-multivalue', contextChars, keys, values, valueDigits } as const;
  checkFits(contextChars, multiValueMinChars(options), `${values + keys - 1} needles`);
  return options;
}

function variableTrackingOptions(fields: Fields, contextChars: number): VariableTrackingOptions {
  const chains = intOption(fields, 'chains', 4, 1, MAX_RETRIEVAL_KEYS / 2);
  const hops = intOption(fields, 'hops', 4, 1, MAX_RETRIEVAL_KEYS / 2 - 1);
  if (chains * (hops + 1) > MAX_RETRIEVAL_KEYS) {
    throw new LetheError(
      'E_ARG',
      `gives ${chains * (hops + 1)} variables with hops ${hops}, at most ${MAX_RETRIEVAL_KEYS}`,
      'chains',
    );
  }
  const valueDigits = intOption(fields, 'valueDigits', 5, 1, 9);
  checkDistinctValues(chains, valueDigits, 'chains');
  const haystack = choiceOption(fields, 'haystack', 'filler', ['filler', 'none'] as const);
  const recited = intOption(fields, 'recited', 0, 0, chains);
  const query = choiceOption(fields, 'query', 'holders', ['holders', 'value'] as const);
  const options = {
    variant: 'variable-tracking',
    contextChars,
    chains,
    hops,
    valueDigits,
    haystack,
    recited,
    query,
  } as const;
  checkFits(contextChars, variableTrackingMinChars(options), `${chains * (hops + 1)} assignments`);
  return options;
}

function frequentWordsOptions(fields: Fields, contextChars: number): FrequentWordsOptions {
  const top = intOption(fields, 'top', 3, 1, 20);
  const alpha = numberOption(fields, 'alpha', 1, 0.25, 4);
  if (frequentWordCounts(contextChars, top, alpha, MAX_RETRIEVAL_KEYS) === undefined) {
    throw new LetheError(
      'E_ARG',
      `is too short to set ${top} most frequent words apart under alpha ${alpha} (raise it or lower top)`,
      'contextChars',
    );
  }
  return { variant: 'frequent-words', contextChars, top, alpha };
}

function twoHopOptions(fields: Fields, contextChars: number): TwoHopOptions {
  const chains = intOption(fields, 'chains', 4, 1, MAX_RETRIEVAL_KEYS / 2);
  const valueDigits = intOption(fields, 'valueDigits', 4, 1, 9);
  const route = choiceOption(fields, 'route', 'hidden', ['hidden', 'written'] as const);
  const options = { variant: 'two-hop', contextChars, chains, valueDigits, route } as const;
  checkDistinctValues(chains, valueDigits, 'chains');
  checkFits(contextChars, twoHopMinChars(options), `${2 * chains} needles`);
  return options;
}

function recitationOptions(fields: Fields, contextChars: number): RecitationOptions {
  const valueDigits = intOption(fields, 'valueDigits', 4, 1, 9);
  const order = choiceOption<RecitationOrder>(fields, 'order', 'shuffled', [
    'shuffled',
    'same',
    'sampled',
  ]);
  const form = choiceOption<RecitationForm>(fields, 'form', 'needles', ['needles', 'chains']);
  const link = choiceOption(fields, 'link', 'number', LINK_FORMS);
  if (form === 'needles' && link !== 'number') {
    throw new LetheError('E_ARG', "words a link, which only form 'chains' has", 'link');
  }
  if (form === 'chains') {
    const chains = recitationChainCount(contextChars, valueDigits, link);
    if (chains < 2 || 2 * chains > MAX_RETRIEVAL_KEYS) {
      throw new LetheError(
        'E_ARG',
        `holds ${chains} chains; a recitation of chains needs 2 to ${MAX_RETRIEVAL_KEYS / 2}`,
        'contextChars',
      );
    }
    checkDistinctValues(chains, valueDigits, 'contextChars');
  } else {
    const needles = kvNeedleCount(contextChars, valueDigits);
    if (needles < 2 || needles > MAX_RETRIEVAL_KEYS) {
      throw new LetheError(
        'E_ARG',
        `holds ${needles} needles of ${needleLength(valueDigits)} characters; a recitation needs 2 to ${MAX_RETRIEVAL_KEYS}`,
        'contextChars',
      );
    }
  }
  return { variant: 'recitation', contextChars, valueDigits, order, form, link };
}

function copyOptions(contextChars: number): CopyOptions {
  const words = copyWordCount(contextChars);
  if (words > MAX_RETRIEVAL_KEYS) {
    throw new LetheError(
      'E_ARG',
      `holds ${words} words of ${2 * COPY_WORD_SYLLABLES} letters; a copy drill takes at most ${MAX_RETRIEVAL_KEYS}`,
      'contextChars',
    );
  }
  return { variant: 'copy', contextChars };
}

function checkDistinctValues(count: number, valueDigits: number, field: string): void {
  const most = Math.floor(digitValueCount(valueDigits) / 2);
  if (count > most) {
    throw new LetheError(
      'E_ARG',
      `needs ${count} distinct ${valueDigits}-digit values, at most ${most} (raise valueDigits)`,
      field,
    );
  }
}

function checkFits(contextChars: number, needed: number, what: string): void {
  if (contextChars < needed) {
    throw new LetheError('E_ARG', `must hold ${what} (at least ${needed})`, 'contextChars');
  }
}

function depthOption(value: unknown): number | 'random' {
  if (value === undefined || value === 'random') return 'random';
  if (typeof value === 'number' && value >= 0 && value <= 1) return value;
  throw new LetheError(
    'E_ARG',
    `must be a number in [0, 1] or "random", got ${typeof value === 'number' ? value : typeof value}`,
    'depth',
  );
}
