import { LetheError } from '@lethe/core';
import type { CapacityBudget, PolicyBudget, RateBudget } from './provider';

/** Whether `budget` is a rate schedule (else a capacity ceiling). */
export function isRateBudget(budget: PolicyBudget): budget is RateBudget {
  return 'keepRatio' in budget;
}

/**
 * Checks a {@link PolicyBudget} and returns a plain copy of it: exactly one of `capacity` (an
 * integer ≥ 2) or `keepRatio` (in (0, 1]) with `every` (a positive integer).
 *
 * @throws LetheError `E_BUDGET` naming `budget`, `budget.capacity`, `budget.keepRatio` or
 *   `budget.every`.
 */
export function validatePolicyBudget(budget: PolicyBudget): PolicyBudget {
  if (typeof budget !== 'object' || budget === null) {
    throw new LetheError('E_BUDGET', 'must be { capacity } or { keepRatio, every }', 'budget');
  }
  const hasRate = 'keepRatio' in budget || 'every' in budget;
  if (hasRate === 'capacity' in budget) {
    throw new LetheError(
      'E_BUDGET',
      'must have either capacity (a ceiling) or keepRatio and every (a rate schedule)',
      'budget',
    );
  }
  if (!hasRate) {
    const { capacity } = budget as CapacityBudget;
    if (!(Number.isInteger(capacity) && capacity >= 2)) {
      throw new LetheError(
        'E_BUDGET',
        `must be an integer ≥ 2 (one kept entry plus the newest token), got ${capacity}`,
        'budget.capacity',
      );
    }
    return { capacity };
  }
  const { keepRatio, every } = budget as RateBudget;
  if (!(typeof keepRatio === 'number' && keepRatio > 0 && keepRatio <= 1)) {
    throw new LetheError('E_BUDGET', `must be in (0, 1], got ${keepRatio}`, 'budget.keepRatio');
  }
  if (!(Number.isInteger(every) && every >= 1)) {
    throw new LetheError('E_BUDGET', `must be a positive integer, got ${every}`, 'budget.every');
  }
  return { keepRatio, every };
}

/**
 * The capacity budget of a provider that supports only ceilings.
 *
 * @param provider The provider's name, for the message.
 * @throws LetheError `E_BUDGET` naming `budget` for a rate schedule.
 */
export function requireCapacityBudget(budget: PolicyBudget, provider: string): CapacityBudget {
  if (isRateBudget(budget)) {
    throw new LetheError(
      'E_BUDGET',
      `"${provider}" supports capacity budgets only, not a rate schedule (keepRatio ${budget.keepRatio} every ${budget.every} tokens)`,
      'budget',
    );
  }
  return budget;
}
