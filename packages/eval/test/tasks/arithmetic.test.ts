import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ARITHMETIC_DEFAULTS,
  type ArithmeticData,
  arithmeticTask,
} from '../../src/tasks/arithmetic';
import { indexArb, seedArb } from './helpers';

const task = arithmeticTask();

describe('arithmetic task', () => {
  it('has the documented shape and format', () => {
    expect(task).toMatchObject({ kind: 'generation', name: 'arithmetic', stopText: '.' });
    expect(task.options).toEqual(ARITHMETIC_DEFAULTS);
    expect(task.example(0, 0)).toMatchObject({
      prompt: 'compute: 8 -7 +3 /4 +4\n',
      target: '8-7=1\n1+3=4\n4/4=1\n1+4=5\nanswer: 5.',
      data: { answer: 5, values: [1, 4, 1, 5] },
    });
  });

  it('is deterministic per (seed, index) and varies across seeds', () => {
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        expect(task.example(seed, index)).toEqual(task.example(seed, index));
      }),
      { numRuns: 50 },
    );
    const prompts = (seed: number) =>
      Array.from({ length: 10 }, (_, i) => task.example(seed, i).prompt).join('|');
    expect(prompts(1)).not.toBe(prompts(2));
  });

  it('writes one correct scratchpad line per step within the rules (property)', () => {
    fc.assert(
      fc.property(
        seedArb,
        indexArb,
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 2, max: 20 }),
        fc.integer({ min: 21, max: 500 }),
        (seed, index, steps, maxOperand, maxValue) => {
          const t = arithmeticTask({ steps, maxOperand, maxValue });
          const example = t.example(seed, index);
          const data = example.data as ArithmeticData;
          const lines = example.target.split('\n');
          expect(lines.pop()).toBe(`answer: ${data.answer}.`);
          expect(lines).toHaveLength(steps);
          let value = data.start;
          const ops = example.prompt
            .replace(/^compute: \d+ /, '')
            .trim()
            .split(' ');
          lines.forEach((line, i) => {
            const m = /^(\d+)([+\-*/])(\d+)=(\d+)$/.exec(line)!;
            expect(m).not.toBeNull();
            expect(Number(m[1])).toBe(value);
            expect(`${m[2]}${m[3]}`).toBe(ops[i]);
            const b = Number(m[3]);
            expect(b).toBeLessThanOrEqual(maxOperand);
            const next =
              m[2] === '+'
                ? value + b
                : m[2] === '-'
                  ? value - b
                  : m[2] === '*'
                    ? value * b
                    : value / b;
            expect(Number.isInteger(next) && next >= 0 && next <= maxValue).toBe(true);
            expect(Number(m[4])).toBe(next);
            value = next;
          });
          expect(value).toBe(data.answer);
          expect(example.target.length).toBeLessThanOrEqual(t.maxNewTokens);
          expect(t.verify(example, example.target)).toEqual({ correct: true });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('verifies only the final answer line', () => {
    const example = task.example(0, 0);
    expect(task.verify(example, 'answer: 5.')).toEqual({ correct: true });
    expect(task.verify(example, '8-7=2\nnonsense\nanswer: 5')).toEqual({ correct: true });
    expect(task.verify(example, '8-7=1\n1+3=4\n4/4=1\n1+4=5\nanswer: 6.')).toEqual({
      correct: false,
      reason: 'wrong answer: got 6, expected 5',
    });
    expect(task.verify(example, '8-7=1\n1+3=4\n4/4=1\n1+4=5').reason).toMatch(/^malformed/);
    expect(task.verify(example, 'answer: five.').reason).toMatch(/^malformed: the answer/);
    expect(task.verify(example, 'answer: 05.').reason).toMatch(/^malformed: the answer/);
    expect(task.verify(example, 'answer: 1+4.').reason).toMatch(/^malformed: the answer/);
    expect(task.verify(example, 'answer: -5.').reason).toBe('wrong answer: got -5, expected 5');
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (s) => {
        expect(typeof task.verify(example, s).correct).toBe('boolean');
      }),
      { numRuns: 300 },
    );
    expect(task.verify({ ...example, data: {} }, 'answer: 5.').reason).toBe(
      'example has no arithmetic data',
    );
  });

  it('rejects bad options, naming the field', () => {
    expectLetheError(() => arithmeticTask({ steps: 0 }), 'E_ARG', 'steps');
    expectLetheError(() => arithmeticTask({ steps: 2.5 }), 'E_ARG', 'steps');
    expectLetheError(() => arithmeticTask({ maxOperand: 1 }), 'E_ARG', 'maxOperand');
    expectLetheError(() => arithmeticTask({ maxOperand: 9, maxValue: 9 }), 'E_ARG', 'maxValue');
    expectLetheError(() => arithmeticTask({ digits: 3 } as never), 'E_ARG', 'digits');
    expect(arithmeticTask({ maxOperand: 200 }).options.maxValue).toBe(201);
  });
});
