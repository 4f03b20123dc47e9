import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type RetrievalData, retrievalTask } from '../../src/tasks/retrieval';
import { twoHopMinChars } from '../../src/tasks/two-hop';
import { indexArb, seedArb } from './helpers';
import { contextOf, expectNearMissesRejected, questionOf, valueNeedles } from './ruler-helpers';

/** `[key, via]` of every link `the number for <key> is the number for <via>.` of `text`. */
function links(text: string): [string, string][] {
  return [...text.matchAll(/the number for ([a-z]+) is the number for ([a-z]+)\./g)].map((m) => [
    m[1]!,
    m[2]!,
  ]);
}

describe('retrieval: two-hop', () => {
  const task = retrievalTask({ variant: 'two-hop', contextChars: 160, chains: 2 });

  it('has the documented defaults and format', () => {
    expect(retrievalTask({ variant: 'two-hop' }).options).toEqual({
      variant: 'two-hop',
      contextChars: 1024,
      chains: 4,
      valueDigits: 4,
      route: 'hidden',
    });
    expect(task.maxNewTokens).toBe('answer: 1234.'.length);
    const example = task.example(0, 0);
    expect(example.prompt).toBe(
      'the number for zaze is the number for rode. the number for rode is 4242. the number for nati is 9537. the number for luka is the number for nati.\nwhat is the number for luka?\n',
    );
    expect(example.target).toBe('answer: 9537.');
    expect(example.data).toEqual({
      variant: 'two-hop',
      queries: ['luka'],
      values: ['9537'],
      keys: 4,
      contextLength: 145,
      via: 'nati',
    });
  });

  it('writes the key it goes through before the answer with route written', () => {
    const written = retrievalTask({
      variant: 'two-hop',
      contextChars: 160,
      chains: 2,
      route: 'written',
    });
    expect(written.maxNewTokens).toBe('via abcd\nanswer: 1234.'.length);
    const example = written.example(0, 0);
    const hidden = task.example(0, 0);
    expect(example.prompt).toBe(hidden.prompt);
    expect(example.data).toEqual(hidden.data);
    expect(example.target).toBe('via nati\nanswer: 9537.');
    expect(example.target).toHaveLength(written.maxNewTokens);
    expect(written.verify(example, example.target)).toEqual({ correct: true });
    // Only the answer line is scored: the route is the model's working, as a Countdown trace is.
    expect(written.verify(example, 'via rode\nanswer: 9537.')).toEqual({ correct: true });
    expect(written.verify(example, 'via nati\nanswer: 4242.').correct).toBe(false);
    expect(written.verify(example, 'via nati').correct).toBe(false);
  });

  it('is deterministic per (seed, index) and varies across indices', () => {
    const big = retrievalTask({ variant: 'two-hop' });
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        expect(big.example(seed, index)).toEqual(big.example(seed, index));
        expect(big.example(seed, index).prompt).not.toBe(big.example(seed, index + 1).prompt);
      }),
      { numRuns: 20 },
    );
  });

  it('defines every key once, without cycles, and resolves the question (property)', () => {
    fc.assert(
      fc.property(
        seedArb,
        indexArb,
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1000, max: 4096 }),
        (seed, index, chains, contextChars) => {
          const t = retrievalTask({ variant: 'two-hop', contextChars, chains });
          const example = t.example(seed, index);
          const data = example.data as RetrievalData;
          const text = contextOf(example);
          const hops = links(text);
          const values = valueNeedles(text);
          expect(hops).toHaveLength(chains);
          expect(values).toHaveLength(chains);
          const defined = [...hops, ...values].map(([key]) => key);
          expect(new Set(defined).size).toBe(2 * chains);
          expect(data.keys).toBe(2 * chains);
          // Links point at keys with values: no cycles, every key has one number.
          const valueByKey = new Map(values);
          for (const [, via] of hops) expect(valueByKey.has(via)).toBe(true);
          const key = data.queries[0]!;
          const via = new Map(hops).get(key);
          expect(via).toBe(data.via);
          expect(data.values).toEqual([valueByKey.get(via!)]);
          expect(questionOf(example)).toBe(`what is the number for ${key}?`);
          expect(example.target).toBe(`answer: ${data.values[0]}.`);
          expect(t.verify(example, example.target)).toEqual({ correct: true });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('puts the link before or after the value needle', () => {
    const t = retrievalTask({ variant: 'two-hop', chains: 1 });
    const linkFirst = Array.from({ length: 40 }, (_, i) => {
      const example = t.example(7, i);
      const text = contextOf(example);
      return text.indexOf(' is the number for ') < text.indexOf(`${example.data.via} is `);
    });
    expect(linkFirst).toContain(true);
    expect(linkFirst).toContain(false);
  });

  it('rejects a wrong answer', () => {
    const example = task.example(0, 0);
    const verify = (completion: string) => task.verify(example, completion);
    expectNearMissesRejected(verify, ['9537'], '4242');
    expect(verify('answer: nati.')).toEqual({
      correct: false,
      reason: 'wrong value for luka: got nati, expected 9537',
    });
    expect(verify('answer: the number for nati.').reason).toBe('expected 1 value, got 4');
  });

  it('rejects bad options, naming the field', () => {
    const twoHop = { variant: 'two-hop' } as const;
    expectLetheError(() => retrievalTask({ ...twoHop, chains: 0 }), 'E_ARG', 'chains');
    expectLetheError(() => retrievalTask({ ...twoHop, chains: 1001 }), 'E_ARG', 'chains');
    expectLetheError(() => retrievalTask({ ...twoHop, valueDigits: 0 }), 'E_ARG', 'valueDigits');
    expectLetheError(() => retrievalTask({ ...twoHop, keys: 4 }), 'E_ARG', 'keys');
    expectLetheError(() => retrievalTask({ ...twoHop, hops: 2 }), 'E_ARG', 'hops');
    // @ts-expect-error: not a route
    expectLetheError(() => retrievalTask({ ...twoHop, route: 'shown' }), 'E_ARG', 'route');
    expectLetheError(
      () => retrievalTask({ variant: 'niah-multi', route: 'written' }),
      'E_ARG',
      'route',
    );
    const needed = twoHopMinChars({ chains: 4, valueDigits: 4 });
    expect(needed).toBe(
      4 *
        ('the number for abcd is the number for efgh. '.length +
          'the number for efgh is 1234. '.length) -
        1,
    );
    expectLetheError(
      () => retrievalTask({ ...twoHop, contextChars: needed - 1 }),
      'E_ARG',
      'contextChars',
    );
    const tight = retrievalTask({ ...twoHop, contextChars: needed });
    const example = tight.example(0, 9);
    expect(contextOf(example)).toHaveLength(needed);
    expect(tight.verify(example, example.target)).toEqual({ correct: true });
  });
});
