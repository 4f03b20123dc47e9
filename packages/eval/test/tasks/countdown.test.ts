import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  COUNTDOWN_DEFAULTS,
  type CountdownData,
  countdownPrompt,
  countdownTask,
  VERBOSE_COUNTDOWN,
} from '../../src/tasks/countdown';
import type { TaskExample } from '../../src/tasks/task';
import { replayCountdownTrace } from './countdown-trace';
import { indexArb, seedArb } from './helpers';

const task = countdownTask();

/** A hand-made example: numbers 25 5 3 7, target 83. */
const HAND: TaskExample = {
  task: 'countdown',
  seed: 0,
  index: 0,
  prompt: countdownPrompt([25, 5, 3, 7], 83),
  target: '',
  data: { numbers: [25, 5, 3, 7], target: 83, solution: '(25+5)*3-7', tries: 0 },
};

function verdict(completion: string) {
  return task.verify(HAND, completion);
}

describe('countdown task', () => {
  it('has the documented shape', () => {
    expect(task.kind).toBe('generation');
    expect(task.name).toBe('countdown');
    expect(task.options).toEqual(COUNTDOWN_DEFAULTS);
    expect(task.stopText).toBe('.');
    expect(task.maxNewTokens).toBe(COUNTDOWN_DEFAULTS.maxTraceChars);
    expect(task.example(1, 4)).toMatchObject({
      prompt: 'numbers: 23 4 25\ntarget: 44\n',
      target: '25+23=48;4 48\n 48-4=44\nanswer: 25+23-4.',
    });
  });

  it('is deterministic per (seed, index) and varies across seeds and indices', () => {
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        const a = task.example(seed, index);
        expect(task.example(seed, index)).toEqual(a);
        expect(a).toMatchObject({ task: 'countdown', seed, index });
      }),
      { numRuns: 50 },
    );
    const prompts = (seed: number) =>
      Array.from({ length: 20 }, (_, i) => task.example(seed, i).prompt).join('|');
    expect(prompts(1)).not.toBe(prompts(2));
    expect(new Set(prompts(1).split('|')).size).toBeGreaterThan(15);
  });

  it('draws instances within the options, with a replayable trace under the cap (property)', () => {
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        const example = task.example(seed, index);
        const data = example.data as CountdownData;
        expect([3, 4]).toContain(data.numbers.length);
        for (const n of data.numbers) {
          expect(n).toBeGreaterThanOrEqual(1);
          expect(n).toBeLessThanOrEqual(COUNTDOWN_DEFAULTS.maxNumber);
        }
        expect(data.target).toBeGreaterThanOrEqual(COUNTDOWN_DEFAULTS.minTarget);
        expect(data.target).toBeLessThanOrEqual(COUNTDOWN_DEFAULTS.maxTarget);
        expect(data.numbers).not.toContain(data.target);
        expect(example.prompt).toBe(countdownPrompt(data.numbers, data.target));
        expect(example.target.length).toBeLessThanOrEqual(COUNTDOWN_DEFAULTS.maxTraceChars);
        const lines = example.target.split('\n');
        const answer = lines.pop()!;
        expect(answer).toBe(`answer: ${data.solution}.`);
        expect(lines.length).toBe(data.tries);
        expect(lines.length).toBeLessThanOrEqual(COUNTDOWN_DEFAULTS.maxTries);
        const values = replayCountdownTrace(data.numbers, lines);
        expect(values.indexOf(data.target)).toBe(values.length - 1);
        expect(task.verify(example, example.target)).toEqual({ correct: true });
      }),
      { numRuns: 300 },
    );
  });

  it('honours count, number range and search budget options', () => {
    const three = countdownTask({ count: 3, maxNumber: 9, maxTries: 8, maxTraceChars: 120 });
    for (let i = 0; i < 50; i++) {
      const example = three.example(5, i);
      const data = example.data as CountdownData;
      expect(data.numbers).toHaveLength(3);
      expect(Math.max(...data.numbers)).toBeLessThanOrEqual(9);
      expect(data.tries).toBeLessThanOrEqual(8);
      expect(example.target.length).toBeLessThanOrEqual(120);
      expect(three.verify(example, example.target).correct).toBe(true);
    }
    const four = countdownTask({ count: 4 });
    expect((four.example(0, 0).data as CountdownData).numbers).toHaveLength(4);
  });

  it('verbose Countdown: 4 numbers, an in-order search trace of 256–1536 characters, many times the prompt (property)', () => {
    const verbose = countdownTask(VERBOSE_COUNTDOWN);
    expect(verbose.options).toMatchObject({ count: 4, search: 'in-order', minTraceChars: 256 });
    expect(verbose.maxNewTokens).toBe(1536);
    const first = verbose.example(0, 0);
    expect(first.prompt).toBe('numbers: 12 6 1 3\ntarget: 10\n');
    expect(first.target.split('\n').slice(0, 2)).toEqual(['12+6=18;1 3 18', ' 3+1=4;18 4']);
    expect(first.target.endsWith('\n  6+4=10\nanswer: 12-6+(3+1).')).toBe(true);
    expect(first.target.split('\n')).toHaveLength(33 + 1); // the documented 33 lines, the answer
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        const example = verbose.example(seed, index);
        const data = example.data as CountdownData;
        expect(data.numbers).toHaveLength(4);
        expect(example.target.length).toBeGreaterThanOrEqual(256);
        expect(example.target.length).toBeLessThanOrEqual(1536);
        expect(example.target.length).toBeGreaterThan(8 * example.prompt.length);
        const lines = example.target.split('\n');
        lines.pop();
        const values = replayCountdownTrace(data.numbers, lines);
        expect(values.indexOf(data.target)).toBe(values.length - 1);
        expect(verbose.verify(example, example.target)).toEqual({ correct: true });
        expect(verbose.example(seed, index)).toEqual(example);
      }),
      { numRuns: 100 },
    );
  });

  it('with goal restated or checked, writes the target where it says (property)', () => {
    const options = { ...VERBOSE_COUNTDOWN, maxTraceChars: 768, maxValue: 100 };
    expect(countdownTask(options).options.goal).toBe('prompt');
    for (const form of ['restated', 'checked'] as const) {
      const task = countdownTask({ ...options, goal: form });
      expect(task.options.goal).toBe(form);
      fc.assert(
        fc.property(seedArb, indexArb, (seed, index) => {
          const example = task.example(seed, index);
          const data = example.data as CountdownData;
          const lines = example.target.split('\n');
          const answer = lines.pop();
          expect(answer).toBe(`answer: ${data.solution}.`);
          const values = replayCountdownTrace(data.numbers, lines, { target: data.target, form });
          expect(values.at(-1)).toBe(data.target);
          expect(lines.filter((line) => line.includes(`;${data.target}:`)).length).toBeGreaterThan(
            0,
          );
          expect(example.target.length).toBeLessThanOrEqual(768);
          expect(task.verify(example, example.target)).toEqual({ correct: true });
        }),
        { numRuns: 60 },
      );
    }
    expectLetheError(() => countdownTask({ goal: 'trace' as 'prompt' }), 'E_ARG', 'goal');
  });

  it('with maxValue, writes no result above it, and still accepts any correct answer (property)', () => {
    const bounded = countdownTask({ ...VERBOSE_COUNTDOWN, maxTraceChars: 768, maxValue: 100 });
    expect(bounded.options.maxValue).toBe(100);
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        const example = bounded.example(seed, index);
        const data = example.data as CountdownData;
        const lines = example.target.split('\n');
        lines.pop();
        const values = replayCountdownTrace(data.numbers, lines);
        for (const value of values) expect(value).toBeLessThanOrEqual(100);
        expect(values.at(-1)).toBe(data.target);
        expect(example.target.length).toBeGreaterThanOrEqual(256);
        expect(bounded.verify(example, example.target)).toEqual({ correct: true });
      }),
      { numRuns: 60 },
    );
    // The rules do not change: an answer through a result over the bound (8*25) is still right.
    const data: CountdownData = { numbers: [8, 25, 3, 1], target: 100, solution: '', tries: 0 };
    const hand = { ...bounded.example(0, 0), data };
    expect(bounded.verify(hand, 'answer: 8*25/(3-1).')).toEqual({ correct: true });
  });

  it('accepts correct answers, with or without the stop and trace', () => {
    expect(verdict('answer: (25+5)*3-7.')).toEqual({ correct: true });
    expect(verdict('answer: (25+5)*3-7')).toEqual({ correct: true });
    expect(verdict('answer: (25+5)*3-7 = 83.')).toEqual({ correct: true });
    expect(verdict('  answer:   (25 + 5) * 3 - 7   \n\n.')).toEqual({ correct: true });
    expect(verdict('answer: (25+5)*3-7.\nanswer: 1.')).toEqual({ correct: true });
    expect(verdict('25+5=30;3 7 30\n 30*3=90;7 90\n  90-7=83\nanswer: (25+5)*3-7.')).toEqual({
      correct: true,
    });
    // The trace is never read: a wrong trace with a right answer line is correct.
    expect(verdict('25+5=31\nanswer: (25+5)*3-7.')).toEqual({ correct: true });
  });

  it('names the reason for incorrect answers', () => {
    const cases: [string, RegExp][] = [
      ['', /^malformed: empty completion/],
      ['25+5=30;3 7 30', /^malformed: the last line is not an "answer:" line/],
      ['answer: (25+5)*3-7 and done.', /^malformed: unexpected character "a"/],
      ['answer: .', /^malformed: empty answer/],
      ['answer: (25+5*3-7.', /^malformed: missing "\)"/],
      ['answer: 25*3+5+3.', /^number 3 used more often than given/],
      ['answer: 25*3+8.', /^number 8 is not one of the given numbers/],
      ['answer: 25*3+5+3 = 83.', /^number 3 used more often than given/],
      ['answer: 7-25+3.', /^non-positive intermediate: 7-25=-18/],
      ['answer: 25/3*7+5.', /^division with remainder: 25\/3/],
      ['answer: 25*3+7 = 83.', /^wrong arithmetic: claims 83 but the expression is 82/],
      ['answer: 25*3+7.', /^wrong target: the expression is 82, the target is 83/],
      ['answer: 25*3+5.\nanswer: (25+5)*3-7.', /^wrong target/],
    ];
    for (const [completion, expected] of cases) {
      const result = verdict(completion);
      expect(result.correct, completion).toBe(false);
      expect(result.reason, completion).toMatch(expected);
    }
  });

  it('never throws on arbitrary completions or broken examples', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (completion) => {
        expect(typeof verdict(completion).correct).toBe('boolean');
        expect(typeof verdict(`answer: ${completion}`).correct).toBe('boolean');
      }),
      { numRuns: 500 },
    );
    expect(task.verify({ ...HAND, data: {} }, 'answer: 25.')).toEqual({
      correct: false,
      reason: 'example has no Countdown data',
    });
    expect(task.verify(HAND, 42 as unknown as string).correct).toBe(false);
  });

  it('rejects bad options, naming the field', () => {
    expectLetheError(() => countdownTask({ count: 5 as 3 }), 'E_ARG', 'count');
    expectLetheError(() => countdownTask({ maxNumber: 1 }), 'E_ARG', 'maxNumber');
    expectLetheError(() => countdownTask({ maxNumber: 2.5 }), 'E_ARG', 'maxNumber');
    expectLetheError(() => countdownTask({ minTarget: 0 }), 'E_ARG', 'minTarget');
    expectLetheError(() => countdownTask({ minTarget: 50, maxTarget: 40 }), 'E_ARG', 'maxTarget');
    expectLetheError(() => countdownTask({ count: 3, maxNumber: 2 }), 'E_ARG', 'minTarget');
    expectLetheError(() => countdownTask({ maxTries: 0 }), 'E_ARG', 'maxTries');
    expectLetheError(() => countdownTask({ maxTraceChars: 10 }), 'E_ARG', 'maxTraceChars');
    expectLetheError(
      () => countdownTask({ minTraceChars: 400, maxTraceChars: 300 }),
      'E_ARG',
      'minTraceChars',
    );
    expectLetheError(() => countdownTask({ minTraceChars: -1 }), 'E_ARG', 'minTraceChars');
    expectLetheError(() => countdownTask({ search: 'bfs' as 'in-order' }), 'E_ARG', 'search');
    expectLetheError(() => countdownTask({ maxValue: -1 }), 'E_ARG', 'maxValue');
    expectLetheError(() => countdownTask({ maxValue: 99 }), 'E_ARG', 'maxValue');
    expect(countdownTask({ maxValue: 100 }).options.maxValue).toBe(100);
    expectLetheError(() => countdownTask({ depth: 1 } as never), 'E_ARG', 'depth');
    expectLetheError(() => countdownTask('x' as never), 'E_ARG', 'options');
    expectLetheError(() => task.example(-1, 0), 'E_ARG', 'seed');
    expectLetheError(() => task.example(0, 1.5), 'E_ARG', 'index');
  });

  it('gives up with E_STATE when the budget admits no instance', () => {
    // Target 8 from numbers ≤ 2 needs 2*2=4 then 4*2=8: two tries.
    const hopeless = countdownTask({
      count: 3,
      maxNumber: 2,
      minTarget: 8,
      maxTarget: 8,
      maxTries: 1,
    });
    expectLetheError(() => hopeless.example(0, 0), 'E_STATE');
  });
});
