import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LANGUAGE_MODEL_DEFAULTS, languageModelTask } from '../../src/tasks/language-model';
import { STORY_CAST } from '../../src/tasks/story-grammar';
import { indexArb, seedArb } from './helpers';

const task = languageModelTask({ documentChars: 512, trainingChars: 20_000 });

describe('language-modelling task', () => {
  it('has the documented shape', () => {
    expect(task).toMatchObject({ kind: 'perplexity', name: 'lm' });
    expect(languageModelTask().options).toEqual(LANGUAGE_MODEL_DEFAULTS);
    expect(languageModelTask().document(0, 0).slice(0, 86)).toBe(
      'this is a story about fote, toko and tafi. fote watched the dark hill inside the lamp.',
    );
  });

  it('gives deterministic documents of the requested length (property)', () => {
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        const doc = task.document(seed, index);
        expect(doc).toBe(task.document(seed, index));
        expect(doc).toHaveLength(512);
        expect(doc).toMatch(/^this is a story about [a-z]+, [a-z]+ and [a-z]+\. [a-z ,.]+$/);
      }),
      { numRuns: 50 },
    );
    expect(task.document(1, 0)).not.toBe(task.document(2, 0));
    expect(task.document(1, 0)).not.toBe(task.document(1, 1));
  });

  it('keeps referring to the cast named in the opening', () => {
    const doc = languageModelTask({ documentChars: 4096 }).document(7, 3);
    const cast = /^this is a story about ([a-z]+), ([a-z]+) and ([a-z]+)\./.exec(doc)!.slice(1);
    expect(cast).toHaveLength(STORY_CAST);
    for (const name of cast) {
      expect(doc.split(name).length - 1).toBeGreaterThan(5);
    }
  });

  it('gives a deterministic training text disjoint from held-out documents', () => {
    const text = task.trainingText(5);
    expect(text).toHaveLength(20_000);
    expect(task.trainingText(5)).toBe(text);
    expect(task.trainingText(6)).not.toBe(text);
    for (let index = 0; index < 20; index++) {
      const doc = task.document(5, index);
      expect(text.includes(doc)).toBe(false);
      expect(text.includes(doc.slice(0, 120))).toBe(false);
    }
    expect(text.split('\n')[0]).toHaveLength(512);
  });

  it('rejects bad options, naming the field', () => {
    expectLetheError(() => languageModelTask({ documentChars: 8 }), 'E_ARG', 'documentChars');
    expectLetheError(
      () => languageModelTask({ documentChars: 1000, trainingChars: 999 }),
      'E_ARG',
      'trainingChars',
    );
    expectLetheError(() => languageModelTask({ seed: 1 } as never), 'E_ARG', 'seed');
    expectLetheError(() => task.document(0, -1), 'E_ARG', 'index');
    expect(languageModelTask({ documentChars: 300_000 }).options.trainingChars).toBe(300_000);
  });
});
