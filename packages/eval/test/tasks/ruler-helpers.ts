import type { Tokenizer } from '@lethe/model';
import fc from 'fast-check';
import { expect } from 'vitest';
import type { GenerationTask, TaskExample } from '../../src/tasks/task';
import { indexArb, seedArb } from './helpers';

/** The id every task tokenizer gives text it cannot read. */
const UNK = 3;

/**
 * Checks (property, 20 runs) that `task`'s examples are the same for the same (seed, index),
 * differ from the next index's, and that every tokenizer of `tokenizers` reads prompt and target
 * without `<unk>` and decodes them back exactly.
 */
export function expectStableReadableExamples(
  task: GenerationTask,
  tokenizers: readonly Tokenizer[],
): void {
  fc.assert(
    fc.property(seedArb, indexArb, (seed, index) => {
      const example = task.example(seed, index);
      expect(task.example(seed, index)).toEqual(example);
      expect(task.example(seed, index + 1).prompt).not.toBe(example.prompt);
      for (const tokenizer of tokenizers) {
        for (const text of [example.prompt, example.target]) {
          const ids = tokenizer.encode(text);
          expect(ids.includes(UNK)).toBe(false);
          expect(tokenizer.decode(ids)).toBe(text);
        }
      }
    }),
    { numRuns: 20 },
  );
}

/** The context of a retrieval example: the prompt before its question line. */
export function contextOf(example: TaskExample): string {
  return example.prompt.slice(0, example.prompt.lastIndexOf('\n', example.prompt.length - 2));
}

/** The question line of a retrieval example. */
export function questionOf(example: TaskExample): string {
  return example.prompt.slice(contextOf(example).length + 1, -1);
}

/**
 * The three lines of a drill's prompt (a line, its recitation or copy, the question), checking
 * that the prompt is exactly those three, each ended by a newline.
 */
export function threeLinesOf(prompt: string): [string, string, string] {
  const lines = prompt.split('\n');
  expect(lines).toHaveLength(4);
  expect(lines[3]).toBe('');
  return [lines[0]!, lines[1]!, lines[2]!];
}

/** `[key, value]` of every needle `the number for <key> is <value>.` of `text`, in order. */
export function valueNeedles(text: string): [string, string][] {
  return [...text.matchAll(/the number for ([a-z]+) is ([0-9]+)\./g)].map((m) => [m[1]!, m[2]!]);
}

/**
 * Checks that the verifier accepts `values` and rejects the usual near misses: a value left
 * out, one too many, the first two swapped, the first one replaced by `wrong`, no answer line.
 */
export function expectNearMissesRejected(
  verify: (completion: string) => { correct: boolean; reason?: string },
  values: readonly string[],
  wrong: string,
): void {
  const answer = (items: readonly string[]): string => `answer: ${items.join(' ')}.`;
  expect(verify(answer(values))).toEqual({ correct: true });
  expect(verify(answer(values.slice(0, -1))).reason).toMatch(
    values.length > 1 ? /^expected \d+ values?, got/ : /^malformed: empty answer/,
  );
  expect(verify(answer([...values, values[0]!])).reason).toMatch(/^expected \d+ values?, got/);
  if (values.length > 1) {
    const swapped = [values[1]!, values[0]!, ...values.slice(2)];
    expect(verify(answer(swapped)).reason).toMatch(/^wrong value for /);
  }
  expect(verify(answer([wrong, ...values.slice(1)])).reason).toMatch(/^wrong value for /);
  expect(verify(values.join(' ')).reason).toMatch(/^malformed/);
}
