import { assertFraction, assertInteger, assertRecord, LetheError } from '@lethe/core';

/**
 * How many live entries an eviction round keeps, per KV head (or per layer at layer granularity).
 *
 * - `{ keepRatio }`: a fraction in (0, 1] of the entries live when the round starts.
 * - `{ keepCount }`: an absolute number of entries a round keeps (a positive integer). This is
 *   what is left *after* a round: the token appended next brings a KV head to `keepCount + 1`.
 *   Not a provider's `CapacityBudget`, whose `capacity` is the most entries a head ever holds,
 *   the newest token included (a provider builds `{ keepCount: capacity − 1 }`, see
 *   `entriesAfterRound`).
 */
export type Budget = { readonly keepRatio: number } | { readonly keepCount: number };

/**
 * Throws `E_BUDGET` unless `budget` is exactly one of the {@link Budget} forms with a valid value.
 *
 * @param argument The name the errors give the budget (default `budget`).
 * @throws LetheError `E_BUDGET` naming `argument` unless it has exactly one of `keepRatio` and
 *   `keepCount` (one with a `capacity` is refused too: that is a provider's ceiling, one more
 *   than a round keeps), naming `argument.keepRatio` for a ratio outside (0, 1], or
 *   `argument.keepCount` for a count that is not a positive integer.
 */
export function validateBudget(budget: Budget, argument = 'budget'): Budget {
  assertRecord(budget, argument, 'E_BUDGET');
  if ('capacity' in budget) {
    throw new LetheError(
      'E_BUDGET',
      "must have exactly one of `keepRatio` or `keepCount`, not `capacity`: that is a provider's CapacityBudget ceiling (the most entries a KV head holds, the newest token included); a round under a ceiling C keeps `{ keepCount: C − 1 }`",
      argument,
    );
  }
  const hasRatio = 'keepRatio' in budget;
  const hasCount = 'keepCount' in budget;
  if (hasRatio === hasCount) {
    throw new LetheError(
      'E_BUDGET',
      'must have exactly one of `keepRatio` or `keepCount`',
      argument,
    );
  }
  if ('keepRatio' in budget) {
    assertFraction(budget.keepRatio, `${argument}.keepRatio`);
  } else if (!(Number.isInteger(budget.keepCount) && budget.keepCount > 0)) {
    throw new LetheError(
      'E_BUDGET',
      `must be a positive integer, got ${budget.keepCount}`,
      `${argument}.keepCount`,
    );
  }
  return budget;
}

/**
 * Number of entries to keep out of `live` under `budget`.
 *
 * `keepRatio` rounds up, `ceil(keepRatio · live)`, so a round keeps at least one entry while any
 * is live; products within 1e-9·live of an integer count as that integer, so floating-point noise
 * (0.3 · 10 = 3.0000000000000004) does not keep an extra entry. `keepCount` gives
 * `min(keepCount, live)`. Zero live entries keep zero.
 *
 * @throws LetheError `E_BUDGET` for an invalid budget, `E_ARG` unless `live` is a non-negative integer.
 */
export function budgetKeepCount(budget: Budget, live: number): number {
  validateBudget(budget);
  assertInteger(live, 'live', 0);
  if ('keepCount' in budget) return Math.min(budget.keepCount, live);
  return Math.min(live, Math.max(live > 0 ? 1 : 0, shareRoundedUp(budget.keepRatio, live)));
}

/**
 * `ceil(fraction · count)`, except that a product within 1e-9·count of an integer counts as that
 * integer (so 0.3 · 10 gives 3, not 4).
 */
export function shareRoundedUp(fraction: number, count: number): number {
  const exact = fraction * count;
  const nearest = Math.round(exact);
  return Math.abs(exact - nearest) <= 1e-9 * count ? nearest : Math.ceil(exact);
}
