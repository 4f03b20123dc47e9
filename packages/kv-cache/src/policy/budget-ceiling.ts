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

/**
 * Entries a round of a policy that leaves `kept` per KV head before one token leaves when
 * `incoming` tokens come next (a prefill chunk; see `LayerObservation.incoming`): `kept −
 * (incoming − 1)`, so that they bring the head back to at most its ceiling — but never fewer
 * than `least` (what the policy must keep: its anchors and the newest entry), where the chunk
 * then cannot fit and the runtime, which ends chunks at the ceiling, feeds fewer tokens.
 */
export function roomyKeep(kept: number, incoming = 1, least = 1): number {
  return Math.max(Math.min(kept, least), kept - (incoming - 1));
}
