import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTask } from '../../src/tasks/registry';
import { TASK_ALPHABETS, taskTokenizer } from '../../src/tasks/tokenizers';
import { indexArb, seedArb } from './helpers';

const UNK = 3;

function expectCovered(family: keyof typeof TASK_ALPHABETS, text: string): void {
  const tokenizer = taskTokenizer(family);
  const ids = tokenizer.encode(text);
  expect(ids.includes(UNK), `${family}: ${JSON.stringify(text)}`).toBe(false);
  expect(tokenizer.decode(ids)).toBe(text);
}

const GENERATION = [
  createTask('countdown'),
  createTask('countdown', { count: 3, maxNumber: 99, maxTarget: 999 }),
  createTask('retrieval'),
  createTask('retrieval', { variant: 'niah-multi', contextChars: 512, valueDigits: 7 }),
  createTask('retrieval', { variant: 'niah-multi', haystack: 'kv', contextChars: 512 }),
  createTask('retrieval', { variant: 'mqar', keys: 32, queries: 8 }),
  createTask('arithmetic', { steps: 6, maxOperand: 99, maxValue: 10_000 }),
];

// The suite's BPE tokenizer has its own tests (suite-tokenizer.test.ts).
describe('task character tokenizers', () => {
  it('have small, duplicate-free alphabets', () => {
    for (const [family, alphabet] of Object.entries(TASK_ALPHABETS)) {
      expect(new Set(alphabet).size, family).toBe(alphabet.length);
      expect(alphabet.length, family).toBeLessThanOrEqual(64);
      expect(taskTokenizer(family as keyof typeof TASK_ALPHABETS).vocabSize).toBe(
        alphabet.length + 4,
      );
    }
  });

  it('encode every prompt and target without <unk> (property)', () => {
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        for (const task of GENERATION) {
          const example = task.example(seed, index);
          expectCovered(task.name as keyof typeof TASK_ALPHABETS, example.prompt);
          expectCovered(task.name as keyof typeof TASK_ALPHABETS, example.target);
          expect(task.tokenizer.encode(example.target).length).toBeLessThanOrEqual(
            task.maxNewTokens,
          );
        }
      }),
      { numRuns: 60 },
    );
  });

  it('encode every language-modelling document and the training text without <unk>', () => {
    const lm = createTask('lm', { documentChars: 256, trainingChars: 4096 });
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        expectCovered('lm', lm.document(seed, index));
      }),
      { numRuns: 60 },
    );
    expectCovered('lm', lm.trainingText(3));
  });

  it('reject unknown families', () => {
    expectLetheError(() => taskTokenizer('chess' as never), 'E_ARG', 'family');
    expectLetheError(() => taskTokenizer('toString' as never), 'E_ARG', 'family');
  });
});
