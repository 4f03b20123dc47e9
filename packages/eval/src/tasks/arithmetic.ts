import { LetheError } from '@lethe/core';
import { finalAnswer, formatAnswer, STOP_TEXT } from './answer';
import { intOption, optionFields } from './options';
import { SeededRandom } from './seeded';
import type { GenerationTask, TaskExample, Verdict } from './task';
import { taskTokenizer } from './tokenizers';

/** Resolved options of the scratchpad arithmetic task (see {@link arithmeticTask}). */
export interface ArithmeticOptions {
  /** Operations in the chain (default 4). */
  readonly steps: number;
  /** Largest operand (default 9); the start value is in `[1, maxOperand]`. */
  readonly maxOperand: number;
  /**
   * Largest running value (default 99, or `maxOperand + 1` if larger); every running value
   * stays in `[0, maxValue]`.
   */
  readonly maxValue: number;
}

/** Options accepted by {@link arithmeticTask}; every field is optional. */
export type ArithmeticOptionsInput = Partial<ArithmeticOptions>;

/** Defaults of {@link ArithmeticOptions}. */
export const ARITHMETIC_DEFAULTS: ArithmeticOptions = { steps: 4, maxOperand: 9, maxValue: 99 };

/** One operation of the chain. */
export interface ArithmeticStep {
  readonly op: '+' | '-' | '*' | '/';
  readonly operand: number;
}

/** Ground truth of an arithmetic example (its `data`). */
export type ArithmeticData = {
  readonly start: number;
  readonly steps: readonly ArithmeticStep[];
  /** Running value after each step; the last is the answer. */
  readonly values: readonly number[];
  readonly answer: number;
};

/**
 * Multi-step arithmetic with a scratchpad: a start value and a chain of operations applied
 * left to right to the running value (no precedence). Each step has a small operand; a
 * subtraction never goes below 0, a division is always exact, a product or sum never exceeds
 * `maxValue`. The reference completion writes one scratchpad line per step — each line
 * consumes the previous result, after which that line is no longer needed — then the answer:
 * ```
 * prompt:  compute: 7 +5 *3 -4\n
 * target:  7+5=12\n12*3=36\n36-4=32\nanswer: 32.
 * ```
 * The verifier checks only the final `answer:` line (an integer, exactly).
 *
 * @throws LetheError `E_ARG` naming the field for a bad option.
 */
export function arithmeticTask(
  options?: ArithmeticOptionsInput,
): GenerationTask<ArithmeticOptions> {
  const resolved = resolveArithmeticOptions(options);
  const tokenizer = taskTokenizer('arithmetic');

  const example = (seed: number, index: number): TaskExample => {
    const random = SeededRandom.forExample('arithmetic', seed, index);
    const start = random.int(1, resolved.maxOperand);
    const steps: ArithmeticStep[] = [];
    const values: number[] = [];
    const lines: string[] = [];
    let value = start;
    for (let i = 0; i < resolved.steps; i++) {
      const step = random.pick(feasibleSteps(value, resolved, random));
      const next = apply(value, step);
      lines.push(`${value}${step.op}${step.operand}=${next}`);
      steps.push(step);
      values.push(next);
      value = next;
    }
    const data: ArithmeticData = { start, steps, values, answer: value };
    return {
      task: 'arithmetic',
      seed,
      index,
      prompt: `compute: ${start} ${steps.map((s) => `${s.op}${s.operand}`).join(' ')}\n`,
      target: `${lines.join('\n')}\n${formatAnswer(String(value))}`,
      data,
    };
  };

  const valueDigits = String(resolved.maxValue).length;
  const lineChars = 2 * valueDigits + String(resolved.maxOperand).length + 3;
  return {
    kind: 'generation',
    name: 'arithmetic',
    options: resolved,
    tokenizer,
    maxNewTokens: resolved.steps * lineChars + formatAnswer('9'.repeat(valueDigits)).length,
    stopText: STOP_TEXT,
    example,
    verify: verifyArithmetic,
  };
}

/** Verifies an arithmetic completion by its final `answer:` line only. Never throws. */
export function verifyArithmetic(example: TaskExample, completion: string): Verdict {
  const expected = (example.data as Partial<ArithmeticData>).answer;
  if (!Number.isSafeInteger(expected)) {
    return { correct: false, reason: 'example has no arithmetic data' };
  }
  const answer = finalAnswer(completion, STOP_TEXT);
  if (!answer.ok) return { correct: false, reason: answer.reason };
  if (!/^-?(0|[1-9][0-9]{0,14})$/.test(answer.text)) {
    return {
      correct: false,
      reason: `malformed: the answer ${JSON.stringify(answer.text)} is not an integer`,
    };
  }
  const value = Number(answer.text);
  if (value !== expected) {
    return { correct: false, reason: `wrong answer: got ${value}, expected ${expected}` };
  }
  return { correct: true };
}

/** One candidate step per operation that keeps the running value within the rules. */
function feasibleSteps(
  value: number,
  options: ArithmeticOptions,
  random: SeededRandom,
): ArithmeticStep[] {
  const { maxOperand, maxValue } = options;
  const out: ArithmeticStep[] = [];
  if (value < maxValue) {
    out.push({ op: '+', operand: random.int(1, Math.min(maxOperand, maxValue - value)) });
  }
  if (value >= 1) out.push({ op: '-', operand: random.int(1, Math.min(maxOperand, value)) });
  if (value >= 1 && 2 * value <= maxValue) {
    out.push({
      op: '*',
      operand: random.int(2, Math.min(maxOperand, Math.floor(maxValue / value))),
    });
  }
  const divisors: number[] = [];
  for (let d = 2; d <= Math.min(maxOperand, value); d++) if (value % d === 0) divisors.push(d);
  if (divisors.length > 0) out.push({ op: '/', operand: random.pick(divisors) });
  return out;
}

function apply(value: number, step: ArithmeticStep): number {
  switch (step.op) {
    case '+':
      return value + step.operand;
    case '-':
      return value - step.operand;
    case '*':
      return value * step.operand;
    case '/':
      return value / step.operand;
  }
}

function resolveArithmeticOptions(options: unknown): ArithmeticOptions {
  const fields = optionFields(options, Object.keys(ARITHMETIC_DEFAULTS), 'arithmetic');
  const d = ARITHMETIC_DEFAULTS;
  const steps = intOption(fields, 'steps', d.steps, 1, 256);
  const maxOperand = intOption(fields, 'maxOperand', d.maxOperand, 2, 999);
  const maxValue = intOption(
    fields,
    'maxValue',
    Math.max(d.maxValue, maxOperand + 1),
    2,
    1_000_000_000,
  );
  if (maxValue <= maxOperand) {
    throw new LetheError(
      'E_ARG',
      `must exceed maxOperand (${maxOperand}), got ${maxValue}`,
      'maxValue',
    );
  }
  return { steps, maxOperand, maxValue };
}
