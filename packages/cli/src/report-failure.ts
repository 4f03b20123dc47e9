import { LetheError } from '@lethe/core';
import { EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_OK, exitCodeOf } from '@lethe/eval/node';
import { CommanderError } from 'commander';

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
