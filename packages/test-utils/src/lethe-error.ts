import { expect } from 'vitest';

/**
 * What the assertions check of a thrown `LetheError`. They go by its `name` rather than by
 * `instanceof`, so a test can exercise a package's source or its build (each has its own class)
 * and `@lethe/tensor`'s own tests can use them without a dependency cycle.
 */
export interface ThrownLetheError extends Error {
  readonly code: string;
  readonly argument?: string;
}

/**
 * Asserts that `fn` throws a `LetheError` — with `code` and naming `argument`, when given.
 *
 * @returns the error, for further checks of its message.
 */
export function expectLetheError(
  fn: () => unknown,
  code?: string,
  argument?: string,
): ThrownLetheError {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  return checkLetheError(thrown, code, argument);
}

/** {@link expectLetheError} for a promise: asserts that it rejects with such an error. */
export async function expectLetheRejection(
  promise: Promise<unknown>,
  code?: string,
  argument?: string,
): Promise<ThrownLetheError> {
  const thrown = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  return checkLetheError(thrown, code, argument);
}

function checkLetheError(thrown: unknown, code?: string, argument?: string): ThrownLetheError {
  expect(thrown, `expected a LetheError ${code ?? ''}, but nothing was thrown`).toBeInstanceOf(
    Error,
  );
  const error = thrown as ThrownLetheError;
  expect(error.name, error.message).toBe('LetheError');
  if (code !== undefined) expect(error.code, error.message).toBe(code);
  if (argument !== undefined) expect(error.argument, error.message).toBe(argument);
  return error;
}
