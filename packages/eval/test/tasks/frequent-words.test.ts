import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FREQUENT_WORDS_MIN_GAP,
  frequentWordCounts,
  frequentWordsTotal,
  topGap,
  zipfCounts,
} from '../../src/tasks/frequent-words';
import { type RetrievalData, retrievalTask } from '../../src/tasks/retrieval';
import { indexArb, seedArb } from './helpers';
import { contextOf, expectNearMissesRejected, questionOf } from './ruler-helpers';

/** Occurrences of each word of `text`, most frequent first. */
function wordCounts(text: string): [string, number][] {
  const counts = new Map<string, number>();
  for (const word of text.split(' ')) counts.set(word, (counts.get(word) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]);
}

describe('frequent-words counts', () => {
  it('follow a Zipf law by largest remainder', () => {
    expect(zipfCounts(205, 1, 2000).slice(0, 6)).toEqual([46, 23, 16, 12, 9, 8]);
    expect(zipfCounts(10, 1, 2)).toEqual([7, 3]);
    expect(topGap([9, 6, 4, 2, 2], 3)).toBe(2);
    expect(topGap([9, 6], 3)).toBe(-1);
  });

  it('sum to the words that fit, never increase, and set the top words apart (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 16, max: 20_000 }),
        fc.integer({ min: 1, max: 20 }),
        fc.double({ min: 0.25, max: 4, noNaN: true }),
        (contextChars, top, alpha) => {
          const total = frequentWordsTotal(contextChars);
          const zipf = zipfCounts(total, alpha, 2000);
          expect(zipf.reduce((a, b) => a + b, 0)).toBe(total);
          const counts = frequentWordCounts(contextChars, top, alpha, 2000);
          if (counts === undefined) return;
          expect(counts.reduce((a, b) => a + b, 0)).toBe(total);
          const ordered = counts.every((n, r) => n >= 1 && (r === 0 || n <= counts[r - 1]!));
          expect(ordered).toBe(true);
          expect(topGap(counts, top)).toBeGreaterThanOrEqual(FREQUENT_WORDS_MIN_GAP);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('retrieval: frequent-words', () => {
  const task = retrievalTask({ variant: 'frequent-words', contextChars: 120 });

  it('has the documented defaults and format', () => {
    expect(retrievalTask({ variant: 'frequent-words' }).options).toEqual({
      variant: 'frequent-words',
      contextChars: 1024,
      top: 3,
      alpha: 1,
    });
    expect(task.maxNewTokens).toBe('answer: abcd abcd abcd.'.length);
    const example = task.example(0, 0);
    expect(example.prompt).toBe(
      'mefa mefa sido zupe zati mefa zati zati mefa sido mefa mefa mefa zati sido sido mefa zupe dike sido mefa dota sido dike\nwhat are the 3 most frequent words in order of frequency?\n',
    );
    expect(example.target).toBe('answer: mefa sido zati.');
    expect(example.data).toEqual({
      variant: 'frequent-words',
      queries: ['rank 1', 'rank 2', 'rank 3'],
      values: ['mefa', 'sido', 'zati'],
      keys: 6,
      contextLength: 119,
      counts: [9, 6, 4, 2],
    });
    const one = retrievalTask({ variant: 'frequent-words', top: 1 }).example(0, 0);
    expect(questionOf(one)).toBe('what is the most frequent word?');
  });

  it('is deterministic per (seed, index) and varies across indices', () => {
    const big = retrievalTask({ variant: 'frequent-words' });
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        expect(big.example(seed, index)).toEqual(big.example(seed, index));
        expect(big.example(seed, index).prompt).not.toBe(big.example(seed, index + 1).prompt);
      }),
      { numRuns: 20 },
    );
  });

  it('asks for words that are the most frequent by a margin (property)', () => {
    fc.assert(
      fc.property(
        seedArb,
        indexArb,
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom(0.5, 1, 1.5, 2),
        fc.integer({ min: 1000, max: 4096 }),
        (seed, index, top, alpha, contextChars) => {
          const t = retrievalTask({ variant: 'frequent-words', contextChars, top, alpha });
          const example = t.example(seed, index);
          const data = example.data as RetrievalData;
          const text = contextOf(example);
          expect(text).toMatch(/^[a-z]{4}( [a-z]{4})*$/);
          const counted = wordCounts(text);
          expect(counted.length).toBe(data.keys);
          expect(counted.slice(0, top).map(([word]) => word)).toEqual(data.values);
          expect(counted.slice(0, top + 1).map(([, n]) => n)).toEqual(data.counts);
          for (let r = 0; r < top; r++) {
            expect(counted[r]![1] - counted[r + 1]![1]).toBeGreaterThanOrEqual(2);
          }
          expect(data.queries).toEqual(data.values.map((_, r) => `rank ${r + 1}`));
          expect(example.target).toBe(`answer: ${data.values.join(' ')}.`);
          expect(example.target.length).toBeLessThanOrEqual(t.maxNewTokens);
          expect(t.verify(example, example.target)).toEqual({ correct: true });
        },
      ),
      { numRuns: 40 },
    );
  });

  it('rejects a wrong, partial or reordered answer', () => {
    const example = task.example(0, 0);
    const verify = (completion: string) => task.verify(example, completion);
    expectNearMissesRejected(verify, ['mefa', 'sido', 'zati'], 'zupe');
    expect(verify('answer: mefa zati sido.')).toEqual({
      correct: false,
      reason: 'wrong value for rank 2: got zati, expected sido',
    });
  });

  it('rejects bad options, naming the field', () => {
    const fw = { variant: 'frequent-words' } as const;
    expectLetheError(() => retrievalTask({ ...fw, top: 0 }), 'E_ARG', 'top');
    expectLetheError(() => retrievalTask({ ...fw, top: 21 }), 'E_ARG', 'top');
    expectLetheError(() => retrievalTask({ ...fw, alpha: 0.1 }), 'E_ARG', 'alpha');
    expectLetheError(() => retrievalTask({ ...fw, alpha: Number.NaN }), 'E_ARG', 'alpha');
    expectLetheError(() => retrievalTask({ ...fw, alpha: '1' as never }), 'E_ARG', 'alpha');
    expectLetheError(() => retrievalTask({ ...fw, contextChars: 60 }), 'E_ARG', 'contextChars');
    expectLetheError(() => retrievalTask({ ...fw, top: 20 }), 'E_ARG', 'contextChars');
    expectLetheError(() => retrievalTask({ ...fw, valueDigits: 3 }), 'E_ARG', 'valueDigits');
    expect(retrievalTask({ ...fw, top: 20, contextChars: 4096 }).options.variant).toBe(
      'frequent-words',
    );
  });
});
