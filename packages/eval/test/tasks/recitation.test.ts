import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { kvNeedleCount } from '../../src/tasks/niah';
import { recitationChainCount } from '../../src/tasks/recitation';
import { type RetrievalData, retrievalTask } from '../../src/tasks/retrieval';
import { taskTokenizer } from '../../src/tasks/tokenizers';
import { LINK_FORMS, type LinkForm } from '../../src/tasks/two-hop';
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
      form: 'needles',
      link: 'number',
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

  it('over chains: links and their needles shuffled, sentences recited, answered via the link (property)', () => {
    const linkPatterns = {
      number: /the number for ([a-z]+) is the number for ([a-z]+)\./g,
      possessive: /the number for ([a-z]+) is ([a-z]+)'s\./g,
    };
    const links = (text: string, link: LinkForm) =>
      [...text.matchAll(linkPatterns[link])].map((m) => [m[1]!, m[2]!]);
    const sentences = (text: string) => text.split(/(?<=\.) /);
    fc.assert(
      fc.property(
        seedArb,
        indexArb,
        fc.integer({ min: 145, max: 4096 }),
        fc.integer({ min: 2, max: 9 }),
        fc.constantFrom('shuffled', 'same', 'sampled'),
        fc.constantFrom(...LINK_FORMS),
        (seed, index, contextChars, valueDigits, order, link) => {
          const chains = recitationChainCount(contextChars, valueDigits, link);
          fc.pre(chains >= 2 && 2 * chains <= 10 ** (valueDigits - 1) * 9);
          const task = retrievalTask({
            variant: 'recitation',
            contextChars,
            valueDigits,
            order,
            form: 'chains',
            link,
          });
          const example = task.example(seed, index);
          const data = example.data as RetrievalData;
          const [line, recitationLine, question] = threeLinesOf(example.prompt);
          // As many chains as fit: a link a → b and b's needle each, keys and values distinct.
          const linked = links(line, link);
          const needles = valueNeedles(line);
          expect(linked).toHaveLength(chains);
          expect(needles).toHaveLength(chains);
          expect(sentences(line)).toHaveLength(2 * chains);
          expect(line.length).toBe(data.contextLength);
          expect(line.length).toBeLessThanOrEqual(contextChars);
          expect(new Set(linked.flat()).size).toBe(2 * chains);
          expect(new Set(needles.map(([, v]) => v)).size).toBe(chains);
          expect(linked.map(([, b]) => b).sort()).toEqual(needles.map(([k]) => k).sort());
          // The question asks an a; the completion names its b, then b's value.
          const key = /^what is the number for ([a-z]+)\?$/.exec(question)?.[1];
          const via = linked.find(([a]) => a === key)?.[1];
          expect(via).toBeDefined();
          const value = needles.find(([k]) => k === via)![1];
          expect(example.target).toBe(`via ${via}\nanswer: ${value}.`);
          expect(data).toMatchObject({ queries: [key], values: [value], keys: 2 * chains, via });
          expect(task.maxNewTokens).toBeGreaterThanOrEqual(example.target.length);
          expect(task.verify(example, example.target)).toEqual({ correct: true });
          // The recitation: sentences of the line, all but the queried chain's two, or drawn.
          const own = [
            link === 'number'
              ? `the number for ${key} is the number for ${via}.`
              : `the number for ${key} is ${via}'s.`,
            `the number for ${via} is ${value}.`,
          ];
          const recited = sentences(recitationLine);
          const others = sentences(line).filter((s) => !own.includes(s));
          if (order === 'sampled') {
            expect(recited).toHaveLength(2 * chains - 2);
            for (const s of recited) expect(sentences(line)).toContain(s);
          } else if (order === 'same') expect(recited).toEqual(others);
          else expect([...recited].sort()).toEqual([...others].sort());
        },
      ),
      { numRuns: 60 },
    );
  });

  it('over chains, draws the queried chain at every place of the line and recites it too', () => {
    // 3 chains at 256 characters: the queried link is one of 6 sentences, recited among 4 draws
    // in 1 − (5/6)^4 ≈ 0.518 of the examples.
    const task = retrievalTask({
      variant: 'recitation',
      contextChars: 256,
      order: 'sampled',
      form: 'chains',
    });
    const n = 300;
    let recitedLink = 0;
    const places = new Array<number>(6).fill(0);
    for (let index = 0; index < n; index++) {
      const example = task.example(9, index);
      const [line, recitationLine] = threeLinesOf(example.prompt);
      const data = example.data as RetrievalData;
      const link = `the number for ${data.queries[0]} is the number for ${data.via}.`;
      if (recitationLine.includes(link)) recitedLink++;
      places[line.split(/(?<=\.) /).indexOf(link)]!++;
    }
    expect(Math.abs(recitedLink / n - (1 - (5 / 6) ** 4))).toBeLessThan(0.09);
    for (const count of places) expect(Math.abs(count - n / 6)).toBeLessThan(25);
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
    expectLetheError(
      () => retrievalTask({ variant: 'recitation', form: 'links' as never }),
      'E_ARG',
      'form',
    );
    expectLetheError(
      () => retrievalTask({ variant: 'recitation', link: 'possessive' }),
      'E_ARG',
      'link',
    );
    expectLetheError(
      () => retrievalTask({ variant: 'recitation', form: 'chains', link: 'via' as never }),
      'E_ARG',
      'link',
    );
    // Two chains need 145 characters (119 with possessive links).
    retrievalTask({ variant: 'recitation', contextChars: 119, form: 'chains', link: 'possessive' });
    expectLetheError(
      () =>
        retrievalTask({
          variant: 'recitation',
          contextChars: 118,
          form: 'chains',
          link: 'possessive',
        }),
      'E_ARG',
      'contextChars',
    );
    retrievalTask({ variant: 'recitation', contextChars: 145, form: 'chains' });
    expectLetheError(
      () => retrievalTask({ variant: 'recitation', contextChars: 144, form: 'chains' }),
      'E_ARG',
      'contextChars',
    );
    expectLetheError(
      () =>
        retrievalTask({
          variant: 'recitation',
          contextChars: 4096,
          valueDigits: 1,
          form: 'chains',
        }),
      'E_ARG',
      'contextChars',
    );
  });
});
