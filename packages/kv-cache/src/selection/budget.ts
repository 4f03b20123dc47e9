import { assertFraction, assertInteger, assertRecord, LetheError } from '@lethe/core';

/**
 * How many live entries an eviction round keeps, per KV head (or per layer at layer granularity).
 *
 * - `{ keepRatio }`: a fraction in (0, 1] of the entries live when the round starts.
 * - `{ capacity }`: an absolute number of entries (a positive integer).
 */
export type Budget = { readonly keepRatio: number } | { readonly capacity: number };

/** Throws `E_BUDGET` unless `budget` is exactly one of the {@link Budget} forms with a valid value. */
export function validateBudget(budget: Budget, argument = 'budget'): Budget {
  assertRecord(budget, argument, 'E_BUDGET');
  const hasRatio = 'keepRatio' in budget;
  const hasCapacity = 'capacity' in budget;
  if (hasRatio === hasCapacity) {
    throw new LetheError(
      'E_BUDGET',
      'must have exactly one of `keepRatio` or `capacity`',
      argument,
    );
  }
  if ('keepRatio' in budget) {
    assertFraction(budget.keepRatio, `${argument}.keepRatio`);
  } else if (!(Number.isInteger(budget.capacity) && budget.capacity > 0)) {
    throw new LetheError(
      'E_BUDGET',
      `must be a positive integer, got ${budget.capacity}`,
      `${argument}.capacity`,
    );
  }
  return budget;
}

/**
 * Number of entries to keep out of `live` under `budget`.
 *
 * `keepRatio` rounds up, `ceil(keepRatio · live)`, so a round keeps at least one entry while any
 * is live; products within 1e-9·live of an integer count as that integer, so floating-point noise
 * (0.3 · 10 = 3.0000000000000004) does not keep an extra entry. `capacity` gives
 * `min(capacity, live)`. Zero live entries keep zero.
 *
 * @throws LetheError `E_BUDGET` for an invalid budget, `E_ARG` unless `live` is a non-negative integer.
 */
export function budgetKeepCount(budget: Budget, live: number): number {
  validateBudget(budget);
  assertInteger(live, 'live', 0);
  if ('capacity' in budget) return Math.min(budget.capacity, live);
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
