import { LetheError } from '@lethe/core';
import type { CountdownOp } from './countdown-expression';
import { choiceOption } from './options';

/**
 * The order in which {@link solveCountdown} tries a state's operations: `closest-first`, the
 * result nearest the target first (a best-first heuristic: short traces), or `in-order`, by pair
 * and then `+ - * /` (an uninformed depth-first search: the long traces of verbose Countdown,
 * the same procedure whatever the target).
 */
export type CountdownSearchOrder = 'closest-first' | 'in-order';

/** The search orders, default first. */
export const COUNTDOWN_SEARCH_ORDERS: readonly CountdownSearchOrder[] = [
  'closest-first',
  'in-order',
];

/**
 * Where a Countdown trace keeps the target: in the prompt only (`prompt`), also before every state
 * a line leaves (`restated`: `16+16=32;64:12 32`, as Stream of Search writes `<target>:[<numbers>]`
 * at every node), or after every line's result (`checked`: states as `restated`, every other line
 * `32+12=44;64` — the result and the target side by side where the search decides whether it is
 * done).
 */
export type CountdownGoal = 'prompt' | 'restated' | 'checked';

/** The goal forms, default first. */
export const COUNTDOWN_GOALS: readonly CountdownGoal[] = ['prompt', 'restated', 'checked'];

/** Options of {@link solveCountdown}. */
export interface CountdownSolverOptions {
  /** Search budget: the most operations the search may try (= trace lines) before giving up. */
  readonly maxTries: number;
  /** Order of the operations tried from each state (default `closest-first`). */
  readonly order?: CountdownSearchOrder;
  /**
   * Largest result the search tries (default: no bound): an operation whose result exceeds it is
   * left out, with everything below it, so every number the trace writes is at most this, the
   * given numbers and the target aside.
   */
  readonly maxValue?: number;
  /**
   * Where the trace keeps the target (default `prompt`): restated, a search finds it a few lines
   * up, where a result is checked against it; checked, on the line of the result itself.
   */
  readonly goal?: CountdownGoal;
}

/** What {@link solveCountdown} found, with its search written out as a trace. */
export interface CountdownSolution {
  /** Whether the target was reached within the budget. */
  readonly solved: boolean;
  /** One line per operation tried, in search order (see {@link solveCountdown}). */
  readonly lines: readonly string[];
  /** The equation reaching the target (minimal parentheses), when solved. */
  readonly expression?: string;
  /** Operations tried (= `lines.length`). */
  readonly tries: number;
}

interface Item {
  readonly value: number;
  readonly expr: string;
  /** 3 for a number, 2 for a product or quotient, 1 for a sum or difference. */
  readonly precedence: number;
}

interface Candidate {
  readonly a: Item;
  readonly b: Item;
  readonly op: CountdownOp;
  readonly value: number;
  readonly rest: readonly Item[];
}

/**
 * Brute-force depth-first Countdown search that writes itself out as a compact trace.
 *
 * From a state (a multiset of numbers) the search tries every operation on a pair `x ≥ y` of
 * its numbers that the rules allow and that is not a no-op: `x+y`, `x-y` if `x > y`, `x*y` if
 * `y > 1`, `x/y` if `y > 1` divides `x` (intermediates stay positive integers; `×1` and `÷1`
 * only drop a number, which the at-most-once rule allows anyway). Operations giving the same
 * `x op y` twice are tried once. Children are tried in pair-then-`+ - * /` order — by default
 * (`order: 'closest-first'`) sorted closest-to-the-target result first, that order breaking
 * ties — each then recursively on the new state; the search stops as soon as a result equals
 * the target (so it may leave numbers unused) or after `maxTries` operations.
 *
 * Trace format, one line per operation tried, indented by one space per depth; a line that
 * leaves more than one number ends with `;` and the new state (the untouched numbers in their
 * order, then the result). Numbers `16 12 16`, target `64`:
 * ```
 * 16+16=32;12 32     try 16+16, leaving 12 and 32
 *  32+12=44          one level deeper; one number left and not the target: dead end
 *  32-12=20          dead end
 *  32*12=384         dead end; the next line, at a lower indent, is a backtrack
 * 16+12=28;16 28
 *  28+16=44
 *  28-16=12
 *  28*16=448
 * 16-12=4;16 4
 *  16*4=64           the target: the search stops (the caller writes `answer: 16*(16-12)`)
 * ```
 * The line that reaches the target has no `;state` suffix and ends the trace. With goal
 * `restated`, each state is written after the target and a colon (`16+16=32;64:12 32`); with
 * `checked`, also every line without a state ends with `;` and the target (` 32+12=44;64`, the
 * last line ` 16*4=64;64`).
 *
 * With `maxValue`, operations whose result exceeds it are not tried (a pruned search: the same
 * order over fewer children).
 *
 * @throws LetheError `E_ARG` for numbers that are not positive safe integers, a target that is
 *   not one, a `maxTries` or `maxValue` that is not a positive integer, or an unknown `order` or
 *   `goal`.
 */
export function solveCountdown(
  numbers: readonly number[],
  target: number,
  options: CountdownSolverOptions,
): CountdownSolution {
  for (const n of numbers) {
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new LetheError('E_ARG', `must be positive integers, got ${n}`, 'numbers');
    }
  }
  if (!Number.isSafeInteger(target) || target < 1) {
    throw new LetheError('E_ARG', `must be a positive integer, got ${target}`, 'target');
  }
  if (!Number.isInteger(options.maxTries) || options.maxTries < 1) {
    throw new LetheError(
      'E_ARG',
      `must be a positive integer, got ${options.maxTries}`,
      'maxTries',
    );
  }
  const maxValue = options.maxValue ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isSafeInteger(maxValue) || maxValue < 1) {
    throw new LetheError('E_ARG', `must be a positive integer, got ${maxValue}`, 'maxValue');
  }
  const fields = options as unknown as Readonly<Record<string, unknown>>;
  const order = choiceOption(fields, 'order', 'closest-first', COUNTDOWN_SEARCH_ORDERS);
  const goal = choiceOption(fields, 'goal', 'prompt', COUNTDOWN_GOALS);
  const checked = goal === 'checked' ? `;${target}` : '';
  const stated = goal === 'prompt' ? ';' : `;${target}:`;
  const lines: string[] = [];
  let expression: string | undefined;

  const search = (state: readonly Item[], depth: number): boolean => {
    const tried = candidates(state).filter((c) => c.value <= maxValue);
    for (const c of order === 'in-order' ? tried : closestFirst(tried, target)) {
      if (lines.length >= options.maxTries) return false;
      const step = `${' '.repeat(depth)}${c.a.value}${c.op}${c.b.value}=${c.value}`;
      if (c.value === target) {
        lines.push(`${step}${checked}`);
        expression = combine(c.a, c.op, c.b).expr;
        return true;
      }
      const next = [...c.rest, combine(c.a, c.op, c.b)];
      if (next.length === 1) {
        lines.push(`${step}${checked}`);
        continue;
      }
      lines.push(`${step}${stated}${next.map((item) => item.value).join(' ')}`);
      if (search(next, depth + 1)) return true;
    }
    return false;
  };

  const start = numbers.map((value) => ({ value, expr: String(value), precedence: 3 }));
  const solved = search(start, 0);
  return solved
    ? { solved, lines, expression: expression!, tries: lines.length }
    : { solved, lines, tries: lines.length };
}

/** The allowed, non-trivial, distinct operations of `state`, by pair and then `+ - * /`. */
function candidates(state: readonly Item[]): Candidate[] {
  const out: Candidate[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < state.length; i++) {
    for (let j = i + 1; j < state.length; j++) {
      const first = state[i]!;
      const second = state[j]!;
      const [a, b] = first.value >= second.value ? [first, second] : [second, first];
      const rest = state.filter((_, k) => k !== i && k !== j);
      const add = (op: CountdownOp, value: number): void => {
        const key = `${a.value}${op}${b.value}`;
        if (seen.has(key)) return;
        seen.add(key);
        out.push({ a, b, op, value, rest });
      };
      add('+', a.value + b.value);
      if (a.value > b.value) add('-', a.value - b.value);
      if (b.value > 1) add('*', a.value * b.value);
      if (b.value > 1 && a.value % b.value === 0) add('/', a.value / b.value);
    }
  }
  return out;
}

/** `candidates` with the result closest to `target` first (a stable sort: ties keep their order). */
function closestFirst(candidates: readonly Candidate[], target: number): Candidate[] {
  return candidates
    .map((candidate, order) => ({ candidate, order }))
    .sort(
      (p, q) =>
        Math.abs(p.candidate.value - target) - Math.abs(q.candidate.value - target) ||
        p.order - q.order,
    )
    .map((p) => p.candidate);
}

/** `a op b` with the fewest parentheses that keep left-to-right evaluation exact. */
function combine(a: Item, op: CountdownOp, b: Item): Item {
  const precedence = op === '+' || op === '-' ? 1 : 2;
  const left = a.precedence < precedence ? `(${a.expr})` : a.expr;
  const right = b.precedence <= precedence ? `(${b.expr})` : b.expr;
  const value =
    op === '+'
      ? a.value + b.value
      : op === '-'
        ? a.value - b.value
        : op === '*'
          ? a.value * b.value
          : a.value / b.value;
  return { value, expr: `${left}${op}${right}`, precedence };
}
