import { LetheError } from '@lethe/tensor';
import { expect } from 'vitest';
import type { ModelSize } from '../../src/pretrain/model-size';

/** A micro model: trains a handful of steps in well under a second on wasm. */
export const MICRO: ModelSize = { hidden: 16, layers: 2, heads: 2, kvHeads: 1, intermediate: 32 };

/** The rejection of `run` as a `LetheError` (fails the test when it resolves or throws another error). */
export async function letheRejection(run: Promise<unknown>): Promise<LetheError> {
  const outcome = await run.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(LetheError);
  return outcome as LetheError;
}

/** The error `run` throws, as a `LetheError`. */
export function letheError(run: () => unknown): LetheError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(LetheError);
    return error as LetheError;
  }
  throw new Error('expected a LetheError');
}

/** Splits a POSIX command line of bare and single-quoted words (as `shellQuote` writes them). */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === ' ') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1);
      word = (word ?? '') + command.slice(i + 1, end);
      i = end;
    } else if (c === '\\') {
      word = (word ?? '') + command[i + 1];
      i += 1;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}
