import { LetheError } from '@lethe/tensor';
import { expect } from 'vitest';

/** Asserts that `run` throws a `LetheError` with `code` about `argument`. */
export function expectLetheError(run: () => unknown, code: string, argument: string): void {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(LetheError);
  expect((thrown as LetheError).code).toBe(code);
  expect((thrown as LetheError).argument).toBe(argument);
}
