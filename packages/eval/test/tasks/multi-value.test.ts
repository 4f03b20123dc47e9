import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { multiValueMinChars } from '../../src/tasks/multi-value';
import { type RetrievalData, retrievalTask } from '../../src/tasks/retrieval';
import { indexArb, seedArb } from './helpers';
import { contextOf, expectNearMissesRejected, questionOf, valueNeedles } from './ruler-helpers';

describe('retrieval: niah-multivalue', () => {
  const task = retrievalTask({ variant: 'niah-multivalue', contextChars: 160 });

  it('has the documented defaults and format', () => {
    expect(retrievalTask({ variant: 'niah-multivalue' }).options).toEqual({
      variant: 'niah-multivalue',
      contextChars: 1024,
      keys: 1,
      values: 4,
      valueDigits: 4,
    });
    expect(task.maxNewTokens).toBe('answer: 1234 1234 1234 1234.'.length);
    const example = task.example(0, 0);
    expect(example.prompt).toBe(
      'the number for zatu is 7692. the grass is green. the number for zatu is 8671. the number for zatu is 3269. the number for zatu is 5897.\nwhat are all the numbers for zatu?\n',
    );
    expect(example.target).toBe('answer: 7692 8671 3269 5897.');
    expect(example.data).toEqual({
      variant: 'niah-multivalue',
      queries: ['zatu', 'zatu', 'zatu', 'zatu'],
      values: ['7692', '8671', '3269', '5897'],
      keys: 1,
      contextLength: 135,
    });
  });

  it('is deterministic per (seed, index) and varies across indices', () => {
    const big = retrievalTask({ variant: 'niah-multivalue', keys: 3 });
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        expect(big.example(seed, index)).toEqual(big.example(seed, index));
        expect(big.example(seed, index).prompt).not.toBe(big.example(seed, index + 1).prompt);
      }),
      { numRuns: 20 },
    );
  });

  it('asks the values of one key in context order, among distractor keys (property)', () => {
    fc.assert(
      fc.property(
        seedArb,
        indexArb,
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 2, max: 8 }),
        fc.integer({ min: 1000, max: 4096 }),
        (seed, index, keys, values, contextChars) => {
          const t = retrievalTask({ variant: 'niah-multivalue', contextChars, keys, values });
          const example = t.example(seed, index);
          const data = example.data as RetrievalData;
          const key = data.queries[0]!;
          const needles = valueNeedles(contextOf(example));
          expect(needles).toHaveLength(values + keys - 1);
          const mine = needles.filter(([k]) => k === key).map(([, v]) => v);
          expect(mine).toEqual(data.values);
          expect(new Set(mine).size).toBe(values);
          const others = needles.filter(([k]) => k !== key).map(([k]) => k);
          expect(new Set(others).size).toBe(keys - 1);
          expect(data.queries).toEqual(mine.map(() => key));
          expect(data.keys).toBe(keys);
          expect(questionOf(example)).toBe(`what are all the numbers for ${key}?`);
          expect(example.target).toBe(`answer: ${mine.join(' ')}.`);
          expect(example.target.length).toBeLessThanOrEqual(t.maxNewTokens);
          expect(t.verify(example, example.target)).toEqual({ correct: true });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('rejects a wrong, partial or reordered answer', () => {
    const example = task.example(0, 0);
    const verify = (completion: string) => task.verify(example, completion);
    expectNearMissesRejected(verify, ['7692', '8671', '3269', '5897'], '7693');
    expect(verify('answer: 7692 8671 3269 5897 .')).toEqual({ correct: true });
    expect(verify('answer: 5897 3269 8671 7692.')).toEqual({
      correct: false,
      reason: 'wrong value for zatu: got 5897, expected 7692',
    });
  });

  it('rejects bad options, naming the field', () => {
    const multivalue = { variant: 'niah-multivalue' } as const;
    expectLetheError(() => retrievalTask({ ...multivalue, values: 1 }), 'E_ARG', 'values');
    expectLetheError(() => retrievalTask({ ...multivalue, values: 2.5 }), 'E_ARG', 'values');
    expectLetheError(() => retrievalTask({ ...multivalue, keys: 0 }), 'E_ARG', 'keys');
    expectLetheError(
      () => retrievalTask({ ...multivalue, values: 5, valueDigits: 1 }),
      'E_ARG',
      'values',
    );
    expectLetheError(
      () => retrievalTask({ ...multivalue, valueDigits: 10 }),
      'E_ARG',
      'valueDigits',
    );
    expectLetheError(() => retrievalTask({ ...multivalue, depth: 0.5 }), 'E_ARG', 'depth');
    expectLetheError(() => retrievalTask({ ...multivalue, chains: 2 }), 'E_ARG', 'chains');
    const needed = multiValueMinChars({ keys: 3, values: 6, valueDigits: 4 });
    expect(needed).toBe(8 * 'the number for abcd is 1234. '.length - 1);
    expectLetheError(
      () => retrievalTask({ ...multivalue, keys: 3, values: 6, contextChars: needed - 1 }),
      'E_ARG',
      'contextChars',
    );
    const tight = retrievalTask({ ...multivalue, keys: 3, values: 6, contextChars: needed });
    const example = tight.example(1, 2);
    expect(contextOf(example)).toHaveLength(needed);
    expect(tight.verify(example, example.target)).toEqual({ correct: true });
  });
});
