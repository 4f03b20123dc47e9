import { LetheError } from '@lethe/core';
import { expect } from 'vitest';

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
