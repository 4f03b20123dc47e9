import { bareMessage, LetheError } from '@lethe/core';

/**
 * A cell's error as plain data, to cross a thread or a job queue and be thrown again as the
 * error it was (a `LetheError` with its code and argument when it was one).
 */
export interface SweepCellFailure {
  readonly name: string;
  readonly message: string;
  readonly code?: LetheError['code'];
  readonly argument?: string;
}

/** `error` as a {@link SweepCellFailure}. */
export function failureOf(error: unknown): SweepCellFailure {
  if (error instanceof LetheError) {
    return {
      name: error.name,
      message: bareMessage(error),
      code: error.code,
      ...(error.argument === undefined ? {} : { argument: error.argument }),
    };
  }
  return error instanceof Error
    ? { name: error.name, message: error.message }
    : { name: 'Error', message: String(error) };
}

/** A {@link SweepCellFailure} as an error of this thread: a `LetheError` again when it was one. */
export function errorOf(failure: SweepCellFailure): Error {
  if (failure.code !== undefined) {
    return new LetheError(failure.code, failure.message, failure.argument);
  }
  const error = new Error(failure.message);
  error.name = failure.name;
  return error;
}
