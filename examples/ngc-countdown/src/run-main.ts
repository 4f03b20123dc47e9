import { LetheError } from '@lethe/tensor';

/** `LetheError` codes that mean the input (flags, files) was wrong: exit 2, as `lethe` does. */
const INPUT_CODES = new Set(['E_ARG', 'E_BUDGET', 'E_FORMAT', 'E_CHECKPOINT']);

/**
 * Runs a script's `main`, printing a `LetheError` as one line (`error: [E_…] argument: …`, exit 2
 * for bad input, 1 otherwise) and anything else with its stack (exit 1). Caught here, not left
 * to Node: tfjs's wasm module rethrows uncaught errors from its own handler, which prints a
 * screen of its minified source before the error.
 */
export async function runMain(main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (error) {
    if (error instanceof LetheError) {
      console.error(`error: ${error.message}`);
      process.exit(INPUT_CODES.has(error.code) ? 2 : 1);
    }
    console.error(error);
    process.exit(1);
  }
}
