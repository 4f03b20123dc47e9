import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyWordCount } from '../../src/tasks/copy-drill';
import { type RetrievalData, retrievalTask } from '../../src/tasks/retrieval';
import { suiteBpeTokenizer } from '../../src/tasks/suite-tokenizer';
import { taskTokenizer } from '../../src/tasks/tokenizers';
import { indexArb, seedArb } from './helpers';
import {
  expectNearMissesRejected,
  expectStableReadableExamples,
  threeLinesOf,
} from './ruler-helpers';

describe('retrieval: copy', () => {
  it('has the documented defaults', () => {
    expect(retrievalTask({ variant: 'copy' }).options).toEqual({
      variant: 'copy',
      contextChars: 1024,
    });
    expect(retrievalTask({ variant: 'copy' }).maxNewTokens).toBe('answer: abcd.'.length);
  });

  it('copies a line of distinct words and asks which word follows one of them (property)', () => {
    fc.assert(
      fc.property(
        seedArb,
        indexArb,
        fc.integer({ min: 16, max: 4096 }),
        (seed, index, contextChars) => {
          const task = retrievalTask({ variant: 'copy', contextChars });
          const example = task.example(seed, index);
          const data = example.data as RetrievalData;
          const [line, copy, question] = threeLinesOf(example.prompt);
          const words = line.split(' ');
          // As many 4-letter words as fit, all distinct, the line within contextChars.
          expect(words).toHaveLength(Math.floor((contextChars + 1) / 5));
          for (const word of words) expect(word).toMatch(/^[a-z]{4}$/);
          expect(new Set(words).size).toBe(words.length);
          expect(line.length).toBe(data.contextLength);
          expect(line.length).toBeLessThanOrEqual(contextChars);
          expect(copy).toBe(line);
          // The queried word is one with a successor; the answer is that successor.
          const word = /^what word follows ([a-z]{4})\?$/.exec(question)?.[1];
          const at = words.indexOf(word!);
          expect(at).toBeGreaterThanOrEqual(0);
          expect(at).toBeLessThan(words.length - 1);
          expect(data.queries).toEqual([word]);
          expect(data.values).toEqual([words[at + 1]]);
          expect(data.keys).toBe(words.length);
          expect(example.target).toBe(`answer: ${words[at + 1]}.`);
          expect(task.verify(example, example.target)).toEqual({ correct: true });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('queries every position with a successor, the first and the one before last included', () => {
    const task = retrievalTask({ variant: 'copy', contextChars: 16 });
    const positions = new Set<number>();
    for (let index = 0; index < 60; index++) {
      const example = task.example(1, index);
      const [line] = threeLinesOf(example.prompt);
      positions.add(line.split(' ').indexOf((example.data as RetrievalData).queries[0]!));
    }
    expect(copyWordCount(16)).toBe(3);
    expect([...positions].sort()).toEqual([0, 1]);
  });

  it('is deterministic per (seed, index), varies across indices, and reads without <unk>', () => {
    expectStableReadableExamples(retrievalTask({ variant: 'copy', contextChars: 512 }), [
      taskTokenizer('retrieval'),
      suiteBpeTokenizer(),
    ]);
  });

  it('rejects the near misses of its answer', () => {
    const task = retrievalTask({ variant: 'copy', contextChars: 256 });
    const example = task.example(0, 0);
    const [next] = (example.data as RetrievalData).values;
    const wrong = next === 'bada' ? 'bade' : 'bada';
    expectNearMissesRejected((completion) => task.verify(example, completion), [next!], wrong);
  });

  it('refuses a line longer than its most words and other variants’ options, naming the field', () => {
    expectLetheError(
      () => retrievalTask({ variant: 'copy', contextChars: 10_005 }),
      'E_ARG',
      'contextChars',
    );
    expectLetheError(
      () => retrievalTask({ variant: 'copy', valueDigits: 4 }),
      'E_ARG',
      'valueDigits',
    );
    expectLetheError(() => retrievalTask({ variant: 'copy', order: 'same' }), 'E_ARG', 'order');
  });
});
