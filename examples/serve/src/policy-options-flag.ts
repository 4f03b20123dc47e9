import { LetheError } from '@lethe/core';
import { isPlainObject } from '@lethe/eval';

/**
 * The options of `--policy-options name=json` (repeatable): for each trained policy given with
 * `--policy`, options over the ones it was trained with, fixed for every request (a SOL
 * controller with `{"refresh": false}`, so that requests may compose it with an eviction
 * policy). The options themselves are checked when the policy is loaded (`loadLearnedPolicy`).
 *
 * @param pairs the flag's `[name, json]` pairs, names not repeated.
 * @param policies the names given with `--policy`.
 * @throws LetheError `E_ARG` naming `--policy-options` for a name not given with `--policy`, or a
 *   value that is not a JSON object (the message naming the policy).
 */
export function policyOptionsOf(
  pairs: readonly (readonly [string, string])[],
  policies: readonly string[],
): Map<string, Record<string, unknown>> {
  const options = new Map<string, Record<string, unknown>>();
  for (const [name, json] of pairs) {
    if (!policies.includes(name)) {
      throw new LetheError('E_ARG', `"${name}" is no --policy name`, '--policy-options');
    }
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch (error) {
      throw new LetheError(
        'E_ARG',
        `${name}: must be JSON: ${(error as Error).message}`,
        '--policy-options',
      );
    }
    if (!isPlainObject(value)) {
      throw new LetheError('E_ARG', `${name}: must be a JSON object`, '--policy-options');
    }
    options.set(name, value);
  }
  return options;
}
