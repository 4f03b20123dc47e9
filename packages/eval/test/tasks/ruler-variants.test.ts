import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTask } from '../../src/tasks/registry';
import {
  RETRIEVAL_VARIANTS,
  type RetrievalData,
  type RetrievalOptionsInput,
  retrievalTask,
} from '../../src/tasks/retrieval';
import { SeededRandom } from '../../src/tasks/seeded';
import { taskTokenizer } from '../../src/tasks/tokenizers';
import { digitValueCount, distinctRandomDigits } from '../../src/tasks/words';
import { indexArb, seedArb } from './helpers';
import { contextOf } from './ruler-helpers';

const UNK = 3;

/** The RULER-style variants added after `niah-single`, `niah-multi` and `mqar`. */
const VARIANTS = ['niah-multivalue', 'variable-tracking', 'frequent-words', 'two-hop'] as const;

describe('retrieval: RULER variants', () => {
  it('are listed', () => {
    expect(RETRIEVAL_VARIANTS).toEqual([
      'niah-single',
      'niah-multi',
      'mqar',
      ...VARIANTS,
      'recitation',
      'copy',
    ]);
  });

  it('encode 50 examples each at 4096 characters without <unk>', () => {
    const tokenizer = taskTokenizer('retrieval');
    for (const variant of VARIANTS) {
      const task = retrievalTask({ variant, contextChars: 4096 });
      for (let index = 0; index < 50; index++) {
        const example = task.example(11, index);
        for (const text of [example.prompt, example.target]) {
          const ids = tokenizer.encode(text);
          expect(ids.includes(UNK), `${variant} #${index}`).toBe(false);
          expect(tokenizer.decode(ids)).toBe(text);
        }
        expect(tokenizer.encode(example.target).length).toBeLessThanOrEqual(task.maxNewTokens);
      }
    }
  });

  it('fill 90 % to 100 % of contexts of 1k to 4k characters (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...VARIANTS),
        fc.integer({ min: 1000, max: 4096 }),
        seedArb,
        indexArb,
        (variant, contextChars, seed, index) => {
          const task = retrievalTask({ variant, contextChars } as RetrievalOptionsInput);
          const example = task.example(seed, index);
          const text = contextOf(example);
          expect(text).not.toContain('\n');
          expect((example.data as RetrievalData).contextLength).toBe(text.length);
          expect(text.length).toBeLessThanOrEqual(contextChars);
          expect(text.length).toBeGreaterThanOrEqual(0.9 * contextChars);
          expect(task.verify(example, example.target)).toEqual({ correct: true });
        },
      ),
      { numRuns: 120 },
    );
  });

  it('are created by the registry with their options', () => {
    for (const variant of VARIANTS) {
      const task = createTask('retrieval', { variant, contextChars: 2048 });
      expect(task.options).toMatchObject({ variant, contextChars: 2048 });
      const example = task.example(3, 4);
      expect(example).toMatchObject({ task: 'retrieval', seed: 3, index: 4 });
      expect(example.data).toMatchObject({ variant });
      expect(task.verify(example, example.target)).toEqual({ correct: true });
      expect(task.example(4, 4).prompt).not.toBe(example.prompt);
    }
  });

  it('draw distinct values', () => {
    const random = SeededRandom.forExample('digits', 0, 0);
    expect(digitValueCount(1)).toBe(9);
    expect(digitValueCount(3)).toBe(900);
    const values = distinctRandomDigits(random, 450, 3);
    expect(new Set(values).size).toBe(450);
    for (const value of values) expect(value).toMatch(/^[1-9][0-9]{2}$/);
    expectLetheError(() => distinctRandomDigits(random, 5, 1), 'E_ARG', 'count');
  });
});
