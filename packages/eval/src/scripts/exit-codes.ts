import type { LetheError } from '@lethe/core';

/** Exit status of a script (and of `lethe`) after success. */
export const EXIT_OK = 0;
/** Exit status after an unexpected failure (printed with its stack). */
export const EXIT_FAILURE = 1;
/** Exit status for bad input: unknown names, out-of-range values, unreadable or malformed files. */
export const EXIT_BAD_INPUT = 2;
/** Exit status after Ctrl-C (128 + SIGINT), with the work done so far saved. */
export const EXIT_INTERRUPTED = 130;

/** `LetheError` codes that mean the input (flags, files) was wrong, not the program. */
const INPUT_CODES = new Set(['E_ARG', 'E_BUDGET', 'E_FORMAT', 'E_CHECKPOINT']);

/** The exit status for a `LetheError`: 2 when its code means bad input, 1 otherwise. */
export function exitCodeOf(error: LetheError): number {
  return INPUT_CODES.has(error.code) ? EXIT_BAD_INPUT : EXIT_FAILURE;
}
