import { LetheError } from '@lethe/core';
import { finalAnswer, formatAnswer, STOP_TEXT } from './answer';
import { checkCountdownExpression } from './countdown-expression';
import {
  COUNTDOWN_GOALS,
  COUNTDOWN_SEARCH_ORDERS,
  type CountdownGoal,
  type CountdownSearchOrder,
  solveCountdown,
} from './countdown-solver';
import { choiceOption, intOption, optionFields } from './options';
import { SeededRandom } from './seeded';
import type { GenerationTask, TaskExample, Verdict } from './task';
import { taskTokenizer } from './tokenizers';

/** Resolved options of the Countdown task (see {@link countdownTask}). */
export interface CountdownOptions {
  /** How many numbers are given: 3, 4, or `mixed` (3 or 4 with equal probability, as in NGC). */
  readonly count: 3 | 4 | 'mixed';
  /** Numbers are drawn uniformly from `[1, maxNumber]`, with repeats allowed. */
  readonly maxNumber: number;
  /** Smallest target. */
  readonly minTarget: number;
  /** Largest target. */
  readonly maxTarget: number;
  /** Search budget of the reference solver: the most operations its trace may try. */
  readonly maxTries: number;
  /** Longest reference completion (trace + answer line + stop), in characters = tokens. */
  readonly maxTraceChars: number;
  /**
   * Shortest reference completion: instances the search solves sooner are drawn again (0: any).
   * Verbose Countdown ({@link VERBOSE_COUNTDOWN}) asks for traces several times the prompt.
   */
  readonly minTraceChars: number;
  /** Order of the reference search (`closest-first` or the uninformed `in-order`). */
  readonly search: CountdownSearchOrder;
  /**
   * Largest result the reference search tries (0: no bound). Bounded, the trace's arithmetic
   * stays small (`maxValue: 100`: sums, differences and products of at most three digits), and
   * instances the bounded search cannot solve are drawn again; an answer beyond the bound is
   * still correct (the rules do not change, only the reference's search).
   */
  readonly maxValue: number;
  /**
   * Where the reference trace keeps the target: in the prompt only (`prompt`, default), also
   * restated by every state line (`restated`: `25+23=48;44:4 48`), a few lines above each result
   * checked against it, as Stream of Search's traces keep it at every node, or also after every
   * other line's result (`checked`: ` 48-4=44;44`, the result beside what it is checked
   * against). See {@link CountdownGoal}.
   */
  readonly goal: CountdownGoal;
}

/** Options accepted by {@link countdownTask}; every field is optional. */
export type CountdownOptionsInput = Partial<CountdownOptions>;

/** Defaults of {@link CountdownOptions}. */
export const COUNTDOWN_DEFAULTS: CountdownOptions = {
  count: 'mixed',
  maxNumber: 25,
  minTarget: 10,
  maxTarget: 100,
  maxTries: 32,
  maxTraceChars: 320,
  minTraceChars: 0,
  search: 'closest-first',
  maxValue: 0,
  goal: 'prompt',
};

/**
 * Verbose Countdown (NGC's regime, where the model's own trace dwarfs its prompt): 4 numbers,
 * the uninformed in-order search written out with its dead ends and backtracks, and only
 * instances whose reference completion runs 256–1536 characters (9–55 times a ~28-character
 * prompt). `createTask('countdown', VERBOSE_COUNTDOWN)`; any field can still be overridden.
 */
export const VERBOSE_COUNTDOWN: CountdownOptionsInput = {
  count: 4,
  search: 'in-order',
  maxTries: 2000,
  minTraceChars: 256,
  maxTraceChars: 1536,
};

/** How many candidate instances one example may draw before giving up (`E_STATE`). */
export const COUNTDOWN_MAX_ATTEMPTS = 2000;

/** Ground truth of a Countdown example (its `data`). */
export type CountdownData = {
  /** The given numbers (a multiset), in prompt order. */
  readonly numbers: readonly number[];
  /** The number to reach. */
  readonly target: number;
  /** The reference equation found by the solver. */
  readonly solution: string;
  /** Operations the reference search tried. */
  readonly tries: number;
};

/**
 * Countdown (NGC §5.2; Gandhi et al., 2024): combine the given numbers with `+ - * /` to reach
 * the target.
 *
 * Rules (standard Countdown): each given number is used at most once (repeats in the prompt
 * are separate numbers), and every intermediate value must be a positive integer — no
 * negative or zero differences, no fractions (a division must be exact).
 *
 * Instances: `count` numbers uniform in `[1, maxNumber]`; the target is the value of a random
 * combination of all of them (so it is reachable), kept when it lies in
 * `[minTarget, maxTarget]` and is not itself one of the numbers, and only when the reference
 * depth-first search ({@link solveCountdown}, in the `search` order) reaches it within
 * `maxTries` operations and the whole reference completion runs `minTraceChars` to
 * `maxTraceChars`. Otherwise the example draws again from its own stream (at most
 * {@link COUNTDOWN_MAX_ATTEMPTS} times). {@link VERBOSE_COUNTDOWN} gives the long traces of
 * NGC's regime (seed 0, index 0: the prompt `numbers: 12 6 1 3\ntarget: 10\n`, a 33-line
 * in-order search that reaches `12-6=6`, then `3+1=4` and `6+4=10`).
 *
 * Format (reference completion = the solver's trace, then the answer line and the stop `.`;
 * default options, seed 1, index 4):
 * ```
 * prompt:  numbers: 23 4 25\ntarget: 44\n
 * target:  25+23=48;4 48\n 48-4=44\nanswer: 25+23-4.
 * ```
 * The verifier reads only the last line before the stop: `answer: <expression>` (an optional
 * `= n` after it must be right), and checks the numbers, the rules and the target exactly;
 * anything else is incorrect with a reason, never an exception.
 *
 * @throws LetheError `E_ARG` naming the field for a bad option.
 */
export function countdownTask(options?: CountdownOptionsInput): GenerationTask<CountdownOptions> {
  const resolved = resolveCountdownOptions(options);
  const tokenizer = taskTokenizer('countdown');
  const counts = resolved.count === 'mixed' ? [3, 4] : [resolved.count];

  const example = (seed: number, index: number): TaskExample => {
    const random = SeededRandom.forExample('countdown', seed, index);
    for (let attempt = 0; attempt < COUNTDOWN_MAX_ATTEMPTS; attempt++) {
      const count = random.pick(counts);
      const numbers = Array.from({ length: count }, () => random.int(1, resolved.maxNumber));
      const target = randomCombination(numbers, random);
      if (target < resolved.minTarget || target > resolved.maxTarget) continue;
      if (numbers.includes(target)) continue;
      const solution = solveCountdown(numbers, target, {
        maxTries: resolved.maxTries,
        order: resolved.search,
        ...(resolved.maxValue > 0 ? { maxValue: resolved.maxValue } : {}),
        goal: resolved.goal,
      });
      if (!solution.solved) continue;
      const completion = `${solution.lines.join('\n')}\n${formatAnswer(solution.expression!)}`;
      if (completion.length > resolved.maxTraceChars) continue;
      if (completion.length < resolved.minTraceChars) continue;
      const data: CountdownData = {
        numbers,
        target,
        solution: solution.expression!,
        tries: solution.tries,
      };
      return {
        task: 'countdown',
        seed,
        index,
        prompt: countdownPrompt(numbers, target),
        target: completion,
        data,
      };
    }
    throw new LetheError(
      'E_STATE',
      `no instance within the search budget after ${COUNTDOWN_MAX_ATTEMPTS} draws; raise maxTries or maxTraceChars, or widen the target range`,
      'options',
    );
  };

  return {
    kind: 'generation',
    name: 'countdown',
    options: resolved,
    tokenizer,
    maxNewTokens: resolved.maxTraceChars,
    stopText: STOP_TEXT,
    example,
    verify: verifyCountdown,
  };
}

/** The prompt of a Countdown instance: `numbers: a b c\ntarget: t\n`. */
export function countdownPrompt(numbers: readonly number[], target: number): string {
  return `numbers: ${numbers.join(' ')}\ntarget: ${target}\n`;
}

/**
 * Verifies a Countdown completion: only its final `answer:` line counts (see
 * {@link countdownTask}). Never throws.
 */
export function verifyCountdown(example: TaskExample, completion: string): Verdict {
  const data = example.data as Partial<CountdownData>;
  if (
    !Array.isArray(data.numbers) ||
    !data.numbers.every((n) => Number.isSafeInteger(n)) ||
    !Number.isSafeInteger(data.target)
  ) {
    return { correct: false, reason: 'example has no Countdown data' };
  }
  const answer = finalAnswer(completion, STOP_TEXT);
  if (!answer.ok) return { correct: false, reason: answer.reason };
  const check = checkCountdownExpression(answer.text, data.numbers);
  if (!check.ok) return { correct: false, reason: check.reason };
  if (check.value !== data.target) {
    return {
      correct: false,
      reason: `wrong target: the expression is ${check.value}, the target is ${data.target}`,
    };
  }
  return { correct: true };
}

function resolveCountdownOptions(options: unknown): CountdownOptions {
  const fields = optionFields(options, Object.keys(COUNTDOWN_DEFAULTS), 'countdown');
  const d = COUNTDOWN_DEFAULTS;
  const count = choiceOption(fields, 'count', d.count, [3, 4, 'mixed'] as const);
  const maxNumber = intOption(fields, 'maxNumber', d.maxNumber, 2, 999);
  const minTarget = intOption(fields, 'minTarget', d.minTarget, 1, 1_000_000);
  const maxTarget = intOption(fields, 'maxTarget', d.maxTarget, 1, 1_000_000);
  if (maxTarget < minTarget) {
    throw new LetheError(
      'E_ARG',
      `must be ≥ minTarget (${minTarget}), got ${maxTarget}`,
      'maxTarget',
    );
  }
  const largest = maxNumber ** (count === 3 ? 3 : 4);
  if (minTarget > largest) {
    throw new LetheError(
      'E_ARG',
      `no target ≥ ${minTarget} is reachable with numbers ≤ ${maxNumber}`,
      'minTarget',
    );
  }
  const maxTries = intOption(fields, 'maxTries', d.maxTries, 1, 100_000);
  const maxTraceChars = intOption(fields, 'maxTraceChars', d.maxTraceChars, 32, 100_000);
  const minTraceChars = intOption(fields, 'minTraceChars', d.minTraceChars, 0, 100_000);
  if (minTraceChars > maxTraceChars) {
    throw new LetheError(
      'E_ARG',
      `must be ≤ maxTraceChars (${maxTraceChars}), got ${minTraceChars}`,
      'minTraceChars',
    );
  }
  const search = choiceOption(fields, 'search', d.search, COUNTDOWN_SEARCH_ORDERS);
  const maxValue = intOption(fields, 'maxValue', d.maxValue, 0, 1_000_000_000);
  if (maxValue > 0 && maxValue < maxTarget) {
    throw new LetheError(
      'E_ARG',
      `must be 0 (no bound) or ≥ maxTarget (${maxTarget}), got ${maxValue}`,
      'maxValue',
    );
  }
  const goal = choiceOption(fields, 'goal', d.goal, COUNTDOWN_GOALS);
  return {
    count,
    maxNumber,
    minTarget,
    maxTarget,
    maxTries,
    maxTraceChars,
    minTraceChars,
    search,
    maxValue,
    goal,
  };
}

/** The value of a random full combination of `numbers` under the rules (uses every number). */
function randomCombination(numbers: readonly number[], random: SeededRandom): number {
  let state = numbers.slice();
  while (state.length > 1) {
    const i = random.int(0, state.length - 1);
    let j = random.int(0, state.length - 2);
    if (j >= i) j++;
    const a = Math.max(state[i]!, state[j]!);
    const b = Math.min(state[i]!, state[j]!);
    const results = [a + b, a * b];
    if (a > b) results.push(a - b);
    if (a % b === 0) results.push(a / b);
    const value = random.pick(results);
    state = state.filter((_, k) => k !== i && k !== j);
    state.push(value);
  }
  return state[0]!;
}
