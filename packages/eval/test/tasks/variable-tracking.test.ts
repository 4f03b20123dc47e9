import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type RetrievalData, retrievalTask } from '../../src/tasks/retrieval';
import { variableRoute, variableTrackingMinChars } from '../../src/tasks/variable-tracking';
import { indexArb, seedArb } from './helpers';
import { contextOf, expectNearMissesRejected, questionOf } from './ruler-helpers';

/** `[name, source]` of every statement `var <name> is <source>.` of `text`, in order. */
function statements(text: string): [string, string][] {
  return [...text.matchAll(/var ([a-z]+) is ([a-z0-9]+)\./g)].map((m) => [m[1]!, m[2]!]);
}

/** Follows each variable's own statement from `variable` to its value: the route, the value. */
function followSources(
  sourceOf: ReadonlyMap<string, string>,
  variable: string,
): { route: string[]; value: string } {
  const route: string[] = [];
  let source = sourceOf.get(variable)!;
  while (!/^[0-9]+$/.test(source)) {
    route.push(source);
    source = sourceOf.get(source)!;
  }
  return { route, value: source };
}

describe('retrieval: variable-tracking', () => {
  const task = retrievalTask({
    variant: 'variable-tracking',
    contextChars: 160,
    chains: 2,
    hops: 2,
  });

  it('has the documented defaults and format', () => {
    expect(retrievalTask({ variant: 'variable-tracking' }).options).toEqual({
      variant: 'variable-tracking',
      contextChars: 1024,
      chains: 4,
      hops: 4,
      valueDigits: 5,
      haystack: 'filler',
      recited: 0,
      query: 'holders',
    });
    expect(retrievalTask({ variant: 'variable-tracking' }).maxNewTokens).toBe(
      'answer: abcd abcd abcd abcd abcd.'.length,
    );
    const example = task.example(0, 0);
    expect(example.prompt).toBe(
      'var luko is 81142. var tibi is 60726. var popo is luko. var dume is popo. the river runs to the sea. var ramo is tibi. var pari is ramo.\nwhich variables hold 81142?\n',
    );
    expect(example.target).toBe('answer: luko popo dume.');
    expect(example.data).toEqual({
      variant: 'variable-tracking',
      queries: ['81142', '81142', '81142'],
      values: ['luko', 'popo', 'dume'],
      keys: 6,
      contextLength: 136,
    });
  });

  it('is deterministic per (seed, index) and varies across indices', () => {
    const big = retrievalTask({ variant: 'variable-tracking' });
    fc.assert(
      fc.property(seedArb, indexArb, (seed, index) => {
        expect(big.example(seed, index)).toEqual(big.example(seed, index));
        expect(big.example(seed, index).prompt).not.toBe(big.example(seed, index + 1).prompt);
      }),
      { numRuns: 20 },
    );
  });

  it('holds acyclic chains whose variables the answer lists exactly (property)', () => {
    fc.assert(
      fc.property(
        seedArb,
        indexArb,
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1000, max: 4096 }),
        (seed, index, chains, hops, contextChars) => {
          const t = retrievalTask({ variant: 'variable-tracking', contextChars, chains, hops });
          const example = t.example(seed, index);
          const data = example.data as RetrievalData;
          const found = statements(contextOf(example));
          expect(found).toHaveLength(chains * (hops + 1));
          // Every variable is assigned once, from a value or a variable assigned before it.
          const valueByKey = new Map<string, string>();
          for (const [name, source] of found) {
            expect(valueByKey.has(name)).toBe(false);
            const value = /^[0-9]+$/.test(source) ? source : valueByKey.get(source);
            expect(value).toBeDefined();
            valueByKey.set(name, value!);
          }
          expect(data.keys).toBe(valueByKey.size);
          const values = found.filter(([, source]) => /^[0-9]+$/.test(source)).map(([, v]) => v);
          expect(new Set(values).size).toBe(chains);
          const asked = data.queries[0]!;
          expect(values).toContain(asked);
          expect(data.queries).toEqual(data.values.map(() => asked));
          expect(questionOf(example)).toBe(`which variables hold ${asked}?`);
          const holders = found
            .map(([name]) => name)
            .filter((name) => valueByKey.get(name) === asked);
          expect(holders).toEqual(data.values);
          expect(holders).toHaveLength(hops + 1);
          for (const name of holders) expect(name).toMatch(/^[a-z]{4}$/);
          expect(example.target).toBe(`answer: ${holders.join(' ')}.`);
          expect(example.target.length).toBeLessThanOrEqual(t.maxNewTokens);
          expect(t.verify(example, example.target)).toEqual({ correct: true });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('interleaves the chains', () => {
    const t = retrievalTask({ variant: 'variable-tracking', chains: 3, hops: 3 });
    const interleaved = Array.from({ length: 20 }, (_, i) => {
      const found = statements(contextOf(t.example(5, i)));
      // Unless interleaved, every link directly follows the statement of its source.
      return found.some(([, source], j) => /^[a-z]/.test(source) && found[j - 1]![0] !== source);
    });
    expect(interleaved.filter(Boolean).length).toBeGreaterThan(10);
  });

  it('as a drill, holds the assignments alone and answers distinct chains before the question (property)', () => {
    fc.assert(
      fc.property(
        seedArb,
        indexArb,
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.nat(6),
        (seed, index, chains, hops, wanted) => {
          const recited = Math.min(wanted, chains);
          const options = { variant: 'variable-tracking', chains, hops } as const;
          const drill = retrievalTask({
            ...options,
            contextChars: 4096,
            haystack: 'none',
            recited,
          });
          const example = drill.example(seed, index);
          const lines = example.prompt.split('\n');
          expect(lines).toHaveLength(2 + 2 * recited + 1);
          expect(lines.at(-1)).toBe('');
          // The context line is the assignments alone: nothing but statements and spaces.
          const found = statements(lines[0]!);
          expect(found).toHaveLength(chains * (hops + 1));
          expect(found.map(([name, source]) => `var ${name} is ${source}.`).join(' ')).toBe(
            lines[0],
          );
          expect((example.data as RetrievalData).contextLength).toBe(lines[0]!.length);
          const valueByKey = new Map<string, string>();
          for (const [name, source] of found) {
            valueByKey.set(name, /^[0-9]+$/.test(source) ? source : valueByKey.get(source)!);
          }
          const holders = (value: string) =>
            found.map(([name]) => name).filter((name) => valueByKey.get(name) === value);
          // Each recited question is on a chain of its own, answered by its reference line.
          const asked = new Set<string>();
          for (let r = 0; r < recited; r++) {
            const value = /^which variables hold ([0-9]+)\?$/.exec(lines[1 + 2 * r]!)![1]!;
            expect(asked.has(value)).toBe(false);
            asked.add(value);
            expect(lines[2 + 2 * r]).toBe(`answer: ${holders(value).join(' ')}.`);
          }
          const value = (example.data as RetrievalData).queries[0]!;
          expect(lines.at(-2)).toBe(`which variables hold ${value}?`);
          expect(example.target).toBe(`answer: ${holders(value).join(' ')}.`);
          expect(drill.verify(example, example.target)).toEqual({ correct: true });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('as a drill, asks a chain recited before or not, so the answer is not told by elimination', () => {
    const drill = retrievalTask({
      variant: 'variable-tracking',
      chains: 4,
      hops: 2,
      haystack: 'none',
      recited: 2,
    });
    const askedBefore = Array.from({ length: 40 }, (_, i) => {
      const example = drill.example(3, i);
      const recitedLines = example.prompt.split('\n').slice(1, -2);
      return recitedLines.includes(questionOf(example));
    });
    expect(askedBefore).toContain(true);
    expect(askedBefore).toContain(false);
    // Without the drill's options, the task is as it was (the golden example above).
    expect(
      retrievalTask({ variant: 'variable-tracking', haystack: 'filler', recited: 0 }).example(0, 0),
    ).toEqual(retrievalTask({ variant: 'variable-tracking' }).example(0, 0));
  });

  it("asked for a value, names the chain's last variable and writes the route back to the value", () => {
    const byValue = retrievalTask({
      variant: 'variable-tracking',
      contextChars: 160,
      chains: 2,
      hops: 2,
      query: 'value',
    });
    const example = byValue.example(0, 0);
    // The same context and chain as the golden example above, asked from the other end.
    expect(example.prompt).toBe(
      'var luko is 81142. var tibi is 60726. var popo is luko. var dume is popo. the river runs to the sea. var ramo is tibi. var pari is ramo.\nwhich value does dume hold?\n',
    );
    expect(example.target).toBe('via popo luko\nanswer: 81142.');
    expect(example.data).toEqual({
      variant: 'variable-tracking',
      queries: ['dume'],
      values: ['81142'],
      keys: 6,
      contextLength: 136,
      via: 'popo luko',
    });
    expect(variableRoute(['luko', 'popo', 'dume'])).toBe('popo luko');
    expect(retrievalTask({ variant: 'variable-tracking', query: 'value' }).maxNewTokens).toBe(
      'via abcd abcd abcd abcd\nanswer: 12345.'.length,
    );
    // The answer line alone is scored: the route is the model's own scratchpad.
    const verify = (completion: string) => byValue.verify(example, completion);
    expect(verify('via ramo tibi\nanswer: 81142.')).toEqual({ correct: true });
    expect(verify('via popo luko\nanswer: 60726.')).toEqual({
      correct: false,
      reason: 'wrong value for dume: got 60726, expected 81142',
    });
    expect(verify('via popo luko')).toMatchObject({ correct: false });
  });

  it("asked for a value, follows each variable's own statement to the asked chain's value (property)", () => {
    fc.assert(
      fc.property(
        seedArb,
        indexArb,
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1000, max: 4096 }),
        (seed, index, chains, hops, contextChars) => {
          const options = { variant: 'variable-tracking', contextChars, chains, hops } as const;
          const t = retrievalTask({ ...options, query: 'value' });
          const example = t.example(seed, index);
          const data = example.data as RetrievalData;
          const sourceOf = new Map(statements(contextOf(example)));
          const asked = /^which value does ([a-z]{4}) hold\?$/.exec(questionOf(example))![1]!;
          expect(data.queries).toEqual([asked]);
          // No statement names the asked variable as its source: it ends its chain.
          expect([...sourceOf.values()]).not.toContain(asked);
          const { route, value: source } = followSources(sourceOf, asked);
          expect(route).toHaveLength(hops);
          expect(data.via).toBe(route.join(' '));
          expect(data.values).toEqual([source]);
          expect(example.target).toBe(`via ${route.join(' ')}\nanswer: ${source}.`);
          expect(example.target.length).toBeLessThanOrEqual(t.maxNewTokens);
          expect(t.verify(example, example.target)).toEqual({ correct: true });
          // The context and the chain are the holders question's, asked from its other end.
          const holders = retrievalTask(options).example(seed, index);
          expect(contextOf(holders)).toBe(contextOf(example));
          expect((holders.data as RetrievalData).values).toEqual([...route.reverse(), asked]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('as a drill asked for values, recites each answered question with its route', () => {
    const drill = retrievalTask({
      variant: 'variable-tracking',
      chains: 4,
      hops: 2,
      haystack: 'none',
      recited: 3,
      query: 'value',
    });
    for (let i = 0; i < 10; i++) {
      const example = drill.example(7, i);
      const lines = example.prompt.split('\n');
      expect(lines).toHaveLength(2 + 3 * 3 + 1);
      const sourceOf = new Map(statements(lines[0]!));
      for (let r = 0; r < 3; r++) {
        const asked = /^which value does ([a-z]{4}) hold\?$/.exec(lines[1 + 3 * r]!)![1]!;
        const { route, value } = followSources(sourceOf, asked);
        expect(route).toHaveLength(2);
        expect(lines[2 + 3 * r]).toBe(`via ${route.join(' ')}`);
        expect(lines[3 + 3 * r]).toBe(`answer: ${value}.`);
      }
    }
  });

  it('rejects a wrong, partial or reordered answer', () => {
    const example = task.example(0, 0);
    const verify = (completion: string) => task.verify(example, completion);
    expectNearMissesRejected(verify, ['luko', 'popo', 'dume'], 'tibi');
    expect(verify('answer: luko popo dume ramo.').reason).toBe('expected 3 values, got 4');
    expect(verify('answer: dume popo luko.')).toEqual({
      correct: false,
      reason: 'wrong value for 81142: got dume, expected luko',
    });
  });

  it('rejects bad options, naming the field', () => {
    const vt = { variant: 'variable-tracking' } as const;
    expectLetheError(() => retrievalTask({ ...vt, chains: 0 }), 'E_ARG', 'chains');
    expectLetheError(() => retrievalTask({ ...vt, hops: 0 }), 'E_ARG', 'hops');
    expectLetheError(() => retrievalTask({ ...vt, hops: 1.5 }), 'E_ARG', 'hops');
    expectLetheError(
      () => retrievalTask({ ...vt, chains: 500, hops: 9, contextChars: 1_000_000 }),
      'E_ARG',
      'chains',
    );
    expectLetheError(() => retrievalTask({ ...vt, chains: 5, valueDigits: 1 }), 'E_ARG', 'chains');
    expectLetheError(() => retrievalTask({ ...vt, keys: 4 }), 'E_ARG', 'keys');
    expectLetheError(() => retrievalTask({ ...vt, top: 4 }), 'E_ARG', 'top');
    expectLetheError(() => retrievalTask({ ...vt, haystack: 'kv' }), 'E_ARG', 'haystack');
    expectLetheError(() => retrievalTask({ ...vt, recited: -1 }), 'E_ARG', 'recited');
    expectLetheError(() => retrievalTask({ ...vt, chains: 3, recited: 4 }), 'E_ARG', 'recited');
    expectLetheError(() => retrievalTask({ variant: 'two-hop', recited: 1 }), 'E_ARG', 'recited');
    expectLetheError(
      () => retrievalTask({ ...vt, query: 'variables' as 'value' }),
      'E_ARG',
      'query',
    );
    expectLetheError(() => retrievalTask({ variant: 'two-hop', query: 'value' }), 'E_ARG', 'query');
    const needed = variableTrackingMinChars({ chains: 4, hops: 4, valueDigits: 5 });
    expect(needed).toBe(4 * ('var abcd is 12345. '.length + 4 * 'var abcd is efgh. '.length) - 1);
    expectLetheError(
      () => retrievalTask({ ...vt, contextChars: needed - 1 }),
      'E_ARG',
      'contextChars',
    );
    const tight = retrievalTask({ ...vt, contextChars: needed });
    const example = tight.example(2, 3);
    expect(contextOf(example)).toHaveLength(needed);
    expect(tight.verify(example, example.target)).toEqual({ correct: true });
  });
});
