import { LetheError } from '@lethe/core';
import { exitCodeOf } from './exit-codes';

/**
 * Runs a script's `main` (the examples' training and evaluation scripts), printing a
 * `LetheError` as one line (`error: [E_…] argument: …`, exit 2 for bad input, 1 otherwise, as
 * `lethe` does) and anything else with its stack (exit 1). Caught here, not left to Node: tfjs's
 * wasm module rethrows uncaught errors from its own handler, which prints a screen of its
 * minified source before the error.
 */
export async function runMain(main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (error) {
    if (error instanceof LetheError) {
      console.error(`error: ${error.message}`);
      process.exit(exitCodeOf(error));
    }
    console.error(error);
    process.exit(1);
  }
}
