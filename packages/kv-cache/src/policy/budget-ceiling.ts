import { LetheError } from '@lethe/core';
import type { CapacityBudget } from './provider';

/**
 * Entries per KV head a round may leave under a {@link CapacityBudget} ceiling: `capacity − 1`, so
 * that the token appended next brings the head back to at most `capacity`.
 *
 * @throws LetheError `E_BUDGET` naming `budget.capacity` unless it is an integer ≥ 2.
 */
export function entriesAfterRound(budget: CapacityBudget): number {
  const { capacity } = budget;
  if (!(Number.isInteger(capacity) && capacity >= 2)) {
    throw new LetheError(
      'E_BUDGET',
      `must be an integer ≥ 2 (one kept entry plus the newest token), got ${capacity}`,
      'budget.capacity',
    );
  }
  return capacity - 1;
}
