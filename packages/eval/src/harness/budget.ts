import { assertInteger, LetheError } from '@lethe/core';
import { type BudgetForm, type PolicyBudget, shareRoundedUp } from '@lethe/kv-cache';
import { nonEmptyList, rejectDuplicates } from './lists';

/**
 * Checks a list of budget fractions: non-empty, each in (0, 1], none repeated.
 *
 * @throws LetheError `E_ARG` naming `argument` for an empty list or a non-array, or
 *   `argument[i]` for a repeated fraction; `E_BUDGET` naming `argument[i]` outside (0, 1].
 */
export function validateBudgetList(value: unknown, argument: string): number[] {
  const budgets = nonEmptyList(value, argument).map((b, i) =>
    validateBudgetFraction(b, `${argument}[${i}]`),
  );
  rejectDuplicates(budgets, (i) => `${argument}[${i}]`);
  return budgets;
}

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
 * The per-KV-head capacity a budget fraction `b` gives for an example whose full cache peaks at
 * `P` entries per KV head: `max(2, ceil(b · P))` — a ceiling holds at least one kept entry plus
 * the newest token (see `PolicyBudget`) — where a product within 1e-9·P of an integer
 * counts as that integer (so 0.3 · 10 gives 3). The capacity is per example, not per cell: a
 * budget of 0.25 keeps a quarter of each example's own full-cache peak, whatever the other
 * examples hold, so the realised peak ratio is the budget (plus the entries a round lets in
 * before it runs: one token, or one prefill chunk).
 *
 * @throws LetheError `E_BUDGET` (argument `budget`) unless `b` is in (0, 1]; `E_ARG` unless
 *   `fullPeak` is a positive integer.
 */
export function capacityFor(budget: number, fullPeak: number): number {
  validateBudgetFraction(budget, 'budget');
  assertInteger(fullPeak, 'fullPeak', 1);
  return Math.max(2, shareRoundedUp(budget, fullPeak));
}

/**
 * A full-cache peak summed over `heads` (layers × KV heads) as entries per KV head. A full cache
 * holds every token in every head, so the sum divides evenly.
 *
 * @throws LetheError `E_ARG` naming `peakTotal` when it is not a positive multiple of `heads`.
 */
export function fullPeakPerHead(peakTotal: number, heads: number): number {
  assertInteger(heads, 'heads', 1);
  if (!(Number.isInteger(peakTotal) && peakTotal > 0 && peakTotal % heads === 0)) {
    throw new LetheError(
      'E_ARG',
      `${peakTotal} is not a positive multiple of ${heads} heads: not a full-cache peak`,
      'peakTotal',
    );
  }
  return peakTotal / heads;
}

/**
 * The policy budget of a sequence under a sweep's budget rule. For a compute policy (`forms`
 * holds only `compute`), the budget fraction `b` is the requested net keep-rate: every axis's
 * target is `b` (`{ targets: { tokenKeep: b, mlpInputKeep: b, precision: b } }`), so the mean
 * over whichever axes the policy controls is `b`. For a read selector (`forms` holds only
 * `read`: Quest), `b` is the share of the cache each decode step reads, by the capacity's
 * per-example rule: `{ readTokens: capacityFor(budget, fullPeak) }` entries per KV head and step,
 * whatever `rateEvery` says (the cache keeps every entry, so there is no round to schedule).
 * Otherwise, with `rateEvery` null, the capacity `capacityFor(budget, fullPeak)` (a ceiling);
 * else the rate schedule "every `rateEvery` tokens keep `⌈budget · live⌉` entries per KV head"
 * (`RateBudget`, the NGC paper's protocol), which does not depend on the full peak.
 *
 * @param forms the budget forms the cell's policy takes (`PreparedPolicy.budgetForms`).
 * @throws LetheError as `capacityFor`.
 */
export function sequenceBudget(
  budget: number,
  fullPeak: number,
  rateEvery: number | null,
  forms: readonly BudgetForm[] = ['capacity', 'rate'],
): PolicyBudget {
  if (forms.length === 1 && forms[0] === 'compute') {
    const b = validateBudgetFraction(budget, 'budget');
    return { targets: { tokenKeep: b, mlpInputKeep: b, precision: b } };
  }
  if (forms.length === 1 && forms[0] === 'read') {
    return { readTokens: capacityFor(budget, fullPeak) };
  }
  if (rateEvery !== null)
    return { keepRatio: validateBudgetFraction(budget, 'budget'), every: rateEvery };
  return { capacity: capacityFor(budget, fullPeak) };
}
