import { shareRoundedUp } from '@lethe/kv-cache';
import { assertInteger, LetheError } from '@lethe/tensor';

/**
 * Checks a budget fraction: a number in (0, 1].
 *
 * @throws LetheError `E_BUDGET` naming `argument` (e.g. `budgets[2]`) otherwise.
 */
export function validateBudgetFraction(value: unknown, argument: string): number {
  if (typeof value !== 'number' || !(value > 0 && value <= 1)) {
    throw new LetheError(
      'E_BUDGET',
      `must be a number in (0, 1], got ${typeof value === 'number' ? value : JSON.stringify(value)}`,
      argument,
    );
  }
  return value;
}

/**
 * Full-cache length `L` of a generation example, in entries per KV head: the prompt plus the
 * task's `maxNewTokens`, i.e. what a full cache would hold if the answer used its whole token
 * allowance (one more than it actually holds, since the last sampled token is never fed back).
 * For a teacher-forced document, `L` is its token count (callers pass `maxNewTokens = 0`).
 *
 * @throws LetheError `E_ARG` unless `promptTokens` ≥ 1 and `maxNewTokens` ≥ 0 are integers.
 */
export function fullCacheLength(promptTokens: number, maxNewTokens: number): number {
  assertInteger(promptTokens, 'promptTokens', 1);
  assertInteger(maxNewTokens, 'maxNewTokens', 0);
  return promptTokens + maxNewTokens;
}

/**
 * The per-KV-head capacity a budget fraction `b` gives for an example of full-cache length `L`:
 * `max(1, ceil(b · L))`, where a product within 1e-9·L of an integer counts as that integer (so
 * 0.3 · 10 gives 3). The capacity is per example, not per cell: a budget of 0.25 keeps a quarter
 * of each example's own full cache, whatever the lengths of the other examples.
 *
 * @throws LetheError `E_BUDGET` (argument `budget`) unless `b` is in (0, 1]; `E_ARG` unless
 *   `fullLength` is a positive integer.
 */
export function capacityFor(budget: number, fullLength: number): number {
  validateBudgetFraction(budget, 'budget');
  assertInteger(fullLength, 'fullLength', 1);
  return Math.max(1, shareRoundedUp(budget, fullLength));
}
