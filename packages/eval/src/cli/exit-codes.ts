import { LetheError } from '@lethe/core';
import { CommanderError } from 'commander';

/** Exit status of `lethe` after success. */
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

/**
 * Reports a failure of a `lethe` command on `stderr` and returns its exit status: a
 * `LetheError` as one line `lethe: <message>` without a stack (exit 2 for bad input, 1
 * otherwise); a commander usage error, which commander has already printed, as 2 (0 for
 * `--help`); anything else with its stack, as 1.
 */
export function reportFailure(error: unknown, stderr: NodeJS.WritableStream): number {
  if (error instanceof LetheError) {
    stderr.write(`lethe: ${error.message}\n`);
    return exitCodeOf(error);
  }
  if (error instanceof CommanderError) {
    return error.exitCode === 0 ? EXIT_OK : EXIT_BAD_INPUT;
  }
  stderr.write(
    `lethe: unexpected error\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return EXIT_FAILURE;
}
