import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/tasks/seeded';
import {
  distinctPseudoWords,
  pseudoWord,
  randomDigits,
  SYLLABLE_COUNT,
} from '../../src/tasks/words';
import { indexArb, seedArb } from './helpers';

describe('SeededRandom', () => {
  it('is deterministic per (stream, seed, index) and independent across them', () => {
    const draw = (stream: string, seed: number, index: number) => {
      const random = SeededRandom.forExample(stream, seed, index);
      return Array.from({ length: 8 }, () => random.int(0, 1_000_000));
    };
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        expect(draw('a', seed, index)).toEqual(draw('a', seed, index));
        expect(draw('a', seed, index)).not.toEqual(draw('b', seed, index));
        expect(draw('a', seed, index)).not.toEqual(draw('a', seed, index + 1));
      }),
      { numRuns: 50 },
    );
    expect(draw('a', 1, 0)).not.toEqual(draw('a', 2, 0));
  });

  it('draws integers in range, uniformly enough', () => {
    const random = SeededRandom.forExample('uniform', 0, 0);
    const counts = new Array(6).fill(0);
    for (let i = 0; i < 6000; i++) counts[random.int(-2, 3) + 2]++;
    for (const c of counts) expect(Math.abs(c - 1000)).toBeLessThan(150);
    expect(random.int(7, 7)).toBe(7);
    expect(random.int(0, 2 ** 32 - 1)).toBeLessThan(2 ** 32);
  });

  it('shuffles, samples and picks without losing or repeating items', () => {
    const random = SeededRandom.forExample('perm', 4, 2);
    const items = Array.from({ length: 20 }, (_, i) => i);
    expect(random.shuffle(items).sort((a, b) => a - b)).toEqual(items);
    const sample = random.sample(items, 5);
    expect(new Set(sample).size).toBe(5);
    expect(items).toContain(random.pick(items));
    expect(random.sample(items, 0)).toEqual([]);
  });

  it('rejects bad arguments', () => {
    const random = SeededRandom.forExample('x', 0, 0);
    expectLetheError(() => SeededRandom.forExample('x', -1, 0), 'E_ARG', 'seed');
    expectLetheError(() => SeededRandom.forExample('x', 0, Number.NaN), 'E_ARG', 'index');
    expectLetheError(() => random.int(3, 2), 'E_ARG', 'range');
    expectLetheError(() => random.int(0, 2 ** 33), 'E_ARG', 'range');
    expectLetheError(() => random.pick([]), 'E_ARG', 'items');
    expectLetheError(() => random.sample([1, 2], 3), 'E_ARG', 'count');
  });
});

describe('pseudo-words and digits', () => {
  it('makes consonant-vowel words, distinct when asked', () => {
    const random = SeededRandom.forExample('words', 1, 1);
    expect(pseudoWord(random, 3)).toMatch(/^([bdfgklmnprstvz][aeiou]){3}$/);
    const words = distinctPseudoWords(random, 500, 2, new Set(['bada']));
    expect(new Set(words).size).toBe(500);
    expect(words).not.toContain('bada');
    expect(SYLLABLE_COUNT).toBe(70);
    expectLetheError(() => distinctPseudoWords(random, 40, 1), 'E_ARG', 'count');
  });

  it('makes digit strings without a leading zero', () => {
    const random = SeededRandom.forExample('digits', 1, 1);
    for (let i = 0; i < 100; i++) expect(randomDigits(random, 4)).toMatch(/^[1-9][0-9]{3}$/);
  });
});
