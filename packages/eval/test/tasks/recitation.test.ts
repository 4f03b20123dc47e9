import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { kvNeedleCount } from '../../src/tasks/niah';
import { type RetrievalData, retrievalTask } from '../../src/tasks/retrieval';
import { taskTokenizer } from '../../src/tasks/tokenizers';
import { indexArb, seedArb } from './helpers';
import {
  expectNearMissesRejected,
  expectStableReadableExamples,
  threeLinesOf,
  valueNeedles,
} from './ruler-helpers';

describe('retrieval: recitation', () => {
  it('has the documented defaults', () => {
    expect(retrievalTask({ variant: 'recitation' }).options).toEqual({
      variant: 'recitation',
      contextChars: 1024,
      valueDigits: 4,
      order: 'shuffled',
    });
    expect(retrievalTask({ variant: 'recitation' }).maxNewTokens).toBe('answer: 1234.'.length);
  });

  it('recites every needle but the queried one, which only the needle line holds, or draws them (property)', () => {
    fc.assert(
      fc.property(
        seedArb,
        indexArb,
        fc.integer({ min: 64, max: 4096 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom('shuffled', 'same', 'sampled'),
        (seed, index, contextChars, valueDigits, order) => {
          fc.pre(kvNeedleCount(contextChars, valueDigits) >= 2);
          const task = retrievalTask({ variant: 'recitation', contextChars, valueDigits, order });
          const example = task.example(seed, index);
          const data = example.data as RetrievalData;
          const [needleLine, recitationLine, question] = threeLinesOf(example.prompt);
          const needles = valueNeedles(needleLine);
          // As many needles as fit, distinct keys, the line within contextChars.
          expect(needles).toHaveLength(kvNeedleCount(contextChars, valueDigits));
          expect(needleLine).toBe(
            needles.map(([k, v]) => `the number for ${k} is ${v}.`).join(' '),
          );
          expect(new Set(needles.map(([key]) => key)).size).toBe(needles.length);
          expect(needleLine.length).toBe(data.contextLength);
          expect(needleLine.length).toBeLessThanOrEqual(contextChars);
          for (const [, value] of needles)
            expect(value).toMatch(new RegExp(`^\\d{${valueDigits}}$`));
          // The question asks for one needle's key; the recitation is every other needle.
          const key = /^what is the number for ([a-z]+)\?$/.exec(question)?.[1];
          const queried = needles.find(([k]) => k === key);
          expect(queried).toBeDefined();
          const recited = valueNeedles(recitationLine);
          expect(recitationLine).toBe(
            recited.map(([k, v]) => `the number for ${k} is ${v}.`).join(' '),
          );
          const others = needles.filter(([k]) => k !== key);
          if (order === 'sampled') {
            // As many needles, each one of the needle line's (the queried one may be among them).
            expect(recited).toHaveLength(others.length);
            for (const needle of recited) expect(needles).toContainEqual(needle);
          } else expect([...recited].sort()).toEqual([...others].sort());
          // In the same order, the recitation is the needle line without the queried needle.
          if (order === 'same') expect(recited).toEqual(others);
          expect(data.queries).toEqual([queried![0]]);
          expect(data.values).toEqual([queried![1]]);
          expect(data.keys).toBe(needles.length);
          expect(example.target).toBe(`answer: ${queried![1]}.`);
          expect(task.verify(example, example.target)).toEqual({ correct: true });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('is deterministic per (seed, index), varies across indices, and reads without <unk>', () => {
    expectStableReadableExamples(retrievalTask({ variant: 'recitation', contextChars: 512 }), [
      taskTokenizer('retrieval'),
    ]);
  });

  it('recites in a fresh order by default, not the needle line’s', () => {
    const task = retrievalTask({ variant: 'recitation', contextChars: 1024 });
    let reordered = 0;
    for (let index = 0; index < 20; index++) {
      const [needleLine, recitationLine, question] = threeLinesOf(task.example(3, index).prompt);
      const key = /for ([a-z]+)\?$/.exec(question)![1];
      const kept = valueNeedles(needleLine).filter(([k]) => k !== key);
      if (JSON.stringify(valueNeedles(recitationLine)) !== JSON.stringify(kept)) reordered++;
    }
    expect(reordered).toBe(20);
  });

  it('in sampled order, leaves nothing to elimination: needles drawn uniformly with replacement', () => {
    // 8 needles at 256 characters: the queried needle is recited in 1 − (7/8)^7 ≈ 0.607 of the
    // examples, some needle twice or more in 1 − (8 · 7 ⋯ 2) / 8^7 ≈ 0.981, and the queried needle's
    // place in the needle line is uniform.
    const task = retrievalTask({ variant: 'recitation', contextChars: 256, order: 'sampled' });
    const n = 400;
    let queriedRecited = 0;
    let repeated = 0;
    const places = new Array<number>(8).fill(0);
    for (let index = 0; index < n; index++) {
      const [needleLine, recitationLine, question] = threeLinesOf(task.example(7, index).prompt);
      const needles = valueNeedles(needleLine);
      expect(needles).toHaveLength(8);
      const key = /for ([a-z]+)\?$/.exec(question)![1];
      const recited = valueNeedles(recitationLine).map(([k]) => k);
      if (recited.includes(key!)) queriedRecited++;
      if (new Set(recited).size < recited.length) repeated++;
      places[needles.findIndex(([k]) => k === key)]!++;
    }
    expect(Math.abs(queriedRecited / n - (1 - (7 / 8) ** 7))).toBeLessThan(0.08);
    expect(Math.abs(repeated / n - (1 - 40320 / 8 ** 7))).toBeLessThan(0.03);
    for (const count of places) expect(Math.abs(count - n / 8)).toBeLessThan(25);
  });

  it('rejects the near misses of its answer', () => {
    const task = retrievalTask({ variant: 'recitation', contextChars: 256 });
    const example = task.example(0, 0);
    const [value] = (example.data as RetrievalData).values;
    const wrong = value === '0000' ? '0001' : '0000';
    expectNearMissesRejected((completion) => task.verify(example, completion), [value!], wrong);
  });

  it('refuses a line too short for two needles and other variants’ options, naming the field', () => {
    expectLetheError(
      () => retrievalTask({ variant: 'recitation', contextChars: 40 }),
      'E_ARG',
      'contextChars',
    );
    expectLetheError(() => retrievalTask({ variant: 'recitation', keys: 4 }), 'E_ARG', 'keys');
    expectLetheError(
      () => retrievalTask({ variant: 'recitation', valueDigits: 0 }),
      'E_ARG',
      'valueDigits',
    );
    expectLetheError(
      () => retrievalTask({ variant: 'recitation', order: 'sorted' as never }),
      'E_ARG',
      'order',
    );
  });
});
