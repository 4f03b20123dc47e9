import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FILLER_SENTENCES } from '../../src/tasks/haystack';
import { kvNeedleCount, needleLength, needleSentence } from '../../src/tasks/niah';
import { type RetrievalData, retrievalTask } from '../../src/tasks/retrieval';
import type { TaskExample } from '../../src/tasks/task';
import { indexArb, seedArb } from './helpers';

const LONGEST_FILLER = Math.max(...FILLER_SENTENCES.map((s) => s.length));

function context(example: TaskExample): string {
  return example.prompt.slice(0, example.prompt.lastIndexOf('\n', example.prompt.length - 2));
}

function needlesIn(text: string): [string, string][] {
  return [...text.matchAll(/the number for ([a-z]+) is ([0-9]+)\./g)].map((m) => [m[1]!, m[2]!]);
}

describe('retrieval: niah-single', () => {
  const task = retrievalTask({ contextChars: 160, depth: 0.5 });

  it('has the documented shape and format', () => {
    expect(task).toMatchObject({ kind: 'generation', name: 'retrieval', stopText: '.' });
    expect(task.options).toEqual({
      variant: 'niah-single',
      contextChars: 160,
      depth: 0.5,
      valueDigits: 4,
    });
    expect(task.maxNewTokens).toBe('answer: 1234.'.length);
    const example = task.example(0, 0);
    expect(example.prompt).toBe(
      'birds sing in the morning. the sun is yellow. snow falls on the hills. the number for nolo is 3430. the sun is yellow. the night is dark and quiet.\nwhat is the number for nolo?\n',
    );
    expect(example.target).toBe('answer: 3430.');
    expect(task.verify(example, example.target)).toEqual({ correct: true });
  });

  it('is deterministic per (seed, index) and varies across seeds', () => {
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        expect(task.example(seed, index)).toEqual(task.example(seed, index));
      }),
      { numRuns: 30 },
    );
    expect(task.example(1, 0).prompt).not.toBe(task.example(2, 0).prompt);
    expect(task.example(1, 0).prompt).not.toBe(task.example(1, 1).prompt);
  });

  it('honours the needle depth and the context length (property)', () => {
    fc.assert(
      fc.property(
        seedArb,
        indexArb,
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 64, max: 4000 }),
        (seed, index, depth, contextChars) => {
          const t = retrievalTask({ contextChars, depth });
          const example = t.example(seed, index);
          const data = example.data as RetrievalData;
          const text = context(example);
          const needle = needleSentence(data.queries[0]!, data.values[0]!);
          expect(data.contextLength).toBe(text.length);
          expect(text.length).toBeLessThanOrEqual(contextChars);
          expect(text.length).toBeGreaterThanOrEqual(contextChars - LONGEST_FILLER - 1);
          expect(text.indexOf(needle)).toBe(data.needleStart);
          expect(needlesIn(text)).toEqual([[data.queries[0], data.values[0]]]);
          const around = text.length - needle.length;
          expect(data.depth).toBeCloseTo(data.needleStart! / around, 12);
          expect(Math.abs(data.depth! - depth)).toBeLessThanOrEqual(
            (LONGEST_FILLER + 1) / 2 / around + 1e-12,
          );
          expect(example.prompt.endsWith(`\nwhat is the number for ${data.queries[0]}?\n`)).toBe(
            true,
          );
          expect(t.verify(example, example.target)).toEqual({ correct: true });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('puts the needle first at depth 0 and last at depth 1', () => {
    const first = retrievalTask({ contextChars: 2000, depth: 0 }).example(3, 3);
    expect(first.prompt.startsWith('the number for ')).toBe(true);
    expect((first.data as RetrievalData).depth).toBe(0);
    const last = retrievalTask({ contextChars: 2000, depth: 1 }).example(3, 3);
    const data = last.data as RetrievalData;
    expect(context(last).endsWith(needleSentence(data.queries[0]!, data.values[0]!))).toBe(true);
    expect(data.depth).toBe(1);
  });

  it('spreads random depths over [0, 1]', () => {
    const random = retrievalTask({ contextChars: 4000 });
    const depths = Array.from(
      { length: 200 },
      (_, i) => (random.example(9, i).data as RetrievalData).depth!,
    );
    expect(Math.min(...depths)).toBeLessThan(0.1);
    expect(Math.max(...depths)).toBeGreaterThan(0.9);
  });
});

describe('retrieval: niah-multi', () => {
  it('hides distractor needles with distinct keys in filler', () => {
    const task = retrievalTask({ variant: 'niah-multi', contextChars: 600, keys: 5, depth: 0.3 });
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        const example = task.example(seed, index);
        const data = example.data as RetrievalData;
        const needles = needlesIn(context(example));
        expect(needles).toHaveLength(5);
        expect(new Set(needles.map(([key]) => key)).size).toBe(5);
        expect(needles).toContainEqual([data.queries[0], data.values[0]]);
        expect(data.keys).toBe(5);
        expect(context(example).length).toBeLessThanOrEqual(600);
        expect(task.verify(example, example.target)).toEqual({ correct: true });
      }),
      { numRuns: 100 },
    );
  });

  it('builds a key-value haystack that fills the context', () => {
    const task = retrievalTask({
      variant: 'niah-multi',
      haystack: 'kv',
      contextChars: 1000,
      depth: 0.5,
    });
    const count = kvNeedleCount(1000, 4);
    expect(task.options).toMatchObject({ haystack: 'kv', keys: count });
    const example = task.example(4, 2);
    const data = example.data as RetrievalData;
    const text = context(example);
    expect(needlesIn(text)).toHaveLength(count);
    expect(text.length).toBe(count * (needleLength(4) + 1) - 1);
    expect(text.length).toBeLessThanOrEqual(1000);
    const around = text.length - needleLength(4);
    expect(Math.abs(data.depth! - 0.5)).toBeLessThanOrEqual((needleLength(4) + 1) / 2 / around);
    expect(task.verify(example, example.target)).toEqual({ correct: true });
  });
});

describe('retrieval: mqar', () => {
  const task = retrievalTask({ variant: 'mqar', keys: 4, queries: 2 });

  it('has the documented format', () => {
    const example = task.example(0, 0);
    expect(example.prompt).toBe('gofe:84 lanu:70 nude:22 dodi:94\nquery: dodi lanu\n');
    expect(example.target).toBe('answer: 94 70.');
    expect(task.maxNewTokens).toBe('answer: 94 70.'.length);
  });

  it('asks distinct keys of the context and expects their values in order (property)', () => {
    const big = retrievalTask({ variant: 'mqar', keys: 64, queries: 8, valueDigits: 3 });
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        const example = big.example(seed, index);
        const data = example.data as RetrievalData;
        const [pairLine, queryLine] = example.prompt.split('\n');
        const pairs = new Map(pairLine!.split(' ').map((p) => p.split(':') as [string, string]));
        expect(pairs.size).toBe(64);
        expect(pairLine!.length).toBe(data.contextLength);
        const queries = queryLine!.replace('query: ', '').split(' ');
        expect(queries).toEqual(data.queries);
        expect(new Set(queries).size).toBe(8);
        expect(queries.map((q) => pairs.get(q))).toEqual(data.values);
        expect(example.target).toBe(`answer: ${data.values.join(' ')}.`);
        expect(example.target.length).toBeLessThanOrEqual(big.maxNewTokens);
        expect(big.verify(example, example.target)).toEqual({ correct: true });
      }),
      { numRuns: 100 },
    );
  });

  it('verifies values exactly and in order', () => {
    const example = task.example(0, 0);
    expect(task.verify(example, 'answer: 94 70')).toEqual({ correct: true });
    expect(task.verify(example, 'answer:  94   70 .')).toEqual({ correct: true });
    expect(task.verify(example, 'answer: 70 94.')).toEqual({
      correct: false,
      reason: 'wrong value for dodi: got 70, expected 94',
    });
    expect(task.verify(example, 'answer: 94.')).toEqual({
      correct: false,
      reason: 'expected 2 values, got 1',
    });
    expect(task.verify(example, 'answer: 94 70 22.').reason).toBe('expected 2 values, got 3');
    expect(task.verify(example, 'dodi is 94, lanu is 70.').reason).toMatch(/^malformed/);
  });
});

describe('retrieval verifier', () => {
  const task = retrievalTask({ contextChars: 200 });
  const example = task.example(0, 5);
  const value = (example.data as RetrievalData).values[0]!;

  it('accepts the exact value only', () => {
    expect(task.verify(example, `answer: ${value}.`)).toEqual({ correct: true });
    expect(task.verify(example, `answer: ${value}`)).toEqual({ correct: true });
    expect(task.verify(example, `answer: ${value}0.`).correct).toBe(false);
    expect(task.verify(example, `answer: 0${value}.`).reason).toMatch(/^wrong value for /);
    expect(task.verify(example, `${value}.`).reason).toMatch(/^malformed/);
    expect(task.verify(example, '').reason).toMatch(/^malformed/);
  });

  it('never throws', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (completion) => {
        expect(typeof task.verify(example, completion).correct).toBe('boolean');
      }),
      { numRuns: 300 },
    );
    expect(task.verify({ ...example, data: {} }, 'answer: 1.').reason).toBe(
      'example has no retrieval data',
    );
  });
});

describe('retrieval options', () => {
  it('rejects bad options, naming the field', () => {
    expectLetheError(() => retrievalTask({ variant: 'niah' as never }), 'E_ARG', 'variant');
    expectLetheError(() => retrievalTask({ queries: 2 }), 'E_ARG', 'queries');
    expectLetheError(() => retrievalTask({ haystack: 'kv' }), 'E_ARG', 'haystack');
    expectLetheError(() => retrievalTask({ variant: 'mqar', depth: 0.5 }), 'E_ARG', 'depth');
    expectLetheError(
      () => retrievalTask({ variant: 'mqar', contextChars: 99 }),
      'E_ARG',
      'contextChars',
    );
    expectLetheError(() => retrievalTask({ foo: 1 } as never), 'E_ARG', 'foo');
    expectLetheError(() => retrievalTask({ depth: 1.5 }), 'E_ARG', 'depth');
    expectLetheError(() => retrievalTask({ depth: 'middle' as never }), 'E_ARG', 'depth');
    expectLetheError(() => retrievalTask({ contextChars: 20 }), 'E_ARG', 'contextChars');
    expectLetheError(() => retrievalTask({ valueDigits: 0 }), 'E_ARG', 'valueDigits');
    expectLetheError(
      () => retrievalTask({ variant: 'niah-multi', keys: 10, contextChars: 200 }),
      'E_ARG',
      'contextChars',
    );
    expectLetheError(() => retrievalTask({ variant: 'niah-multi', keys: 1 }), 'E_ARG', 'keys');
    expectLetheError(
      () => retrievalTask({ variant: 'niah-multi', haystack: 'kv', keys: 4 }),
      'E_ARG',
      'keys',
    );
    expectLetheError(
      () => retrievalTask({ variant: 'niah-multi', haystack: 'kv', contextChars: 40 }),
      'E_ARG',
      'contextChars',
    );
    expectLetheError(
      () => retrievalTask({ variant: 'niah-multi', haystack: 'kv', contextChars: 1_000_000 }),
      'E_ARG',
      'contextChars',
    );
    expectLetheError(
      () => retrievalTask({ variant: 'mqar', keys: 3, queries: 4 }),
      'E_ARG',
      'queries',
    );
    expectLetheError(() => retrievalTask({ variant: 'mqar', keys: 5000 }), 'E_ARG', 'keys');
  });
});
