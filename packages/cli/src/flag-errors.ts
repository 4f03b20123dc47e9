import { bareMessage, LetheError } from '@lethe/core';

/**
 * Re-issues a `LetheError` about a configuration field (`budgets[0]`, `modelSize.hidden`) so
 * that it names the command-line flag that set it too: `[E_BUDGET] --budget (budgets[0]): …`.
 * Errors about anything else are returned unchanged.
 *
 * @param flagOf - the flag of a field, or `undefined` when no flag sets it.
 */
export function nameFlag(error: unknown, flagOf: (field: string) => string | undefined): unknown {
  if (!(error instanceof LetheError) || error.argument === undefined) return error;
  const flag = flagOf(error.argument);
  if (flag === undefined || flag === error.argument) return error;
  return new LetheError(error.code, bareMessage(error), `${flag} (${error.argument})`);
}
