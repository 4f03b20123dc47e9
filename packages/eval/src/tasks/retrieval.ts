import { LetheError } from '@lethe/core';
import { finalAnswer, formatAnswer, STOP_TEXT } from './answer';
import { mqarContextLength, mqarInstance } from './mqar';
import { kvNeedleCount, type NiahSpec, needleLength, niahInstance } from './niah';
import { choiceOption, intOption, optionFields } from './options';
import { SeededRandom } from './seeded';
import type { GenerationTask, TaskExample, Verdict } from './task';
import { taskTokenizer } from './tokenizers';

/** The retrieval variants. */
export const RETRIEVAL_VARIANTS = ['niah-single', 'niah-multi', 'mqar'] as const;

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

/** Resolved options of the retrieval task: one of the variants. */
export type RetrievalOptions = NiahSingleOptions | NiahMultiOptions | MqarOptions;

/** Options accepted by {@link retrievalTask} (fields of the chosen variant only). */
export interface RetrievalOptionsInput {
  /** Default `niah-single`. */
  readonly variant?: RetrievalVariant;
  readonly contextChars?: number;
  readonly depth?: number | 'random';
  readonly haystack?: 'filler' | 'kv';
  readonly keys?: number;
  readonly queries?: number;
  readonly valueDigits?: number;
}

/** Ground truth of a retrieval example (its `data`). */
export type RetrievalData = {
  readonly variant: RetrievalVariant;
  /** Queried keys, in order. */
  readonly queries: readonly string[];
  /** Their values: the expected answer, in order. */
  readonly values: readonly string[];
  /** Keys in the context (needles or pairs). */
  readonly keys: number;
  /** Length of the context before the question line. */
  readonly contextLength: number;
  /** NIAH only: requested depth (drawn when `random`). */
  readonly requestedDepth?: number;
  /** NIAH only: realised depth of the queried needle. */
  readonly depth?: number;
  /** NIAH only: character offset of the queried needle in the prompt. */
  readonly needleStart?: number;
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
 * Context lengths are in characters, which are the tokens of the task's tokenizer. The
 * verifier compares the final `answer:` line's whitespace-separated values exactly.
 *
 * @throws LetheError `E_ARG` naming the field for a bad option.
 */
export function retrievalTask(options?: RetrievalOptionsInput): GenerationTask<RetrievalOptions> {
  const resolved = resolveRetrievalOptions(options);
  const tokenizer = taskTokenizer('retrieval');
  const stream = `retrieval/${resolved.variant}`;

  const instanceOf = (
    random: SeededRandom,
  ): { prompt: string; target: string; data: RetrievalData } => {
    if (resolved.variant === 'mqar') {
      const instance = mqarInstance(random, resolved);
      return {
        ...instance,
        data: {
          variant: 'mqar',
          queries: instance.queries,
          values: instance.values,
          keys: instance.pairs.length,
          contextLength: mqarContextLength(resolved),
        },
      };
    }
    const spec: NiahSpec =
      resolved.variant === 'niah-single'
        ? { ...resolved, haystack: 'filler', needles: 1 }
        : { ...resolved, needles: resolved.keys };
    const instance = niahInstance(random, spec);
    return {
      ...instance,
      data: {
        variant: resolved.variant,
        queries: [instance.key],
        values: [instance.value],
        keys: instance.needles,
        contextLength: instance.contextLength,
        requestedDepth: instance.requestedDepth,
        depth: instance.depth,
        needleStart: instance.needleStart,
      },
    };
  };

  const example = (seed: number, index: number): TaskExample => {
    const { prompt, target, data } = instanceOf(SeededRandom.forExample(stream, seed, index));
    return { task: 'retrieval', seed, index, prompt, target, data };
  };

  const answers = resolved.variant === 'mqar' ? resolved.queries : 1;
  const longest = Array.from({ length: answers }, () => '9'.repeat(resolved.valueDigits));
  return {
    kind: 'generation',
    name: 'retrieval',
    options: resolved,
    tokenizer,
    maxNewTokens: formatAnswer(longest.join(' ')).length,
    stopText: STOP_TEXT,
    example,
    verify: verifyRetrieval,
  };
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

function depthOption(value: unknown): number | 'random' {
  if (value === undefined || value === 'random') return 'random';
  if (typeof value === 'number' && value >= 0 && value <= 1) return value;
  throw new LetheError(
    'E_ARG',
    `must be a number in [0, 1] or "random", got ${typeof value === 'number' ? value : typeof value}`,
    'depth',
  );
}
