import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  isRateBudget,
  type PolicyBudget,
  requireCapacityBudget,
  validatePolicyBudget,
} from '../src/index';

describe('validatePolicyBudget', () => {
  it('returns a plain copy of either form', () => {
    expect(validatePolicyBudget({ capacity: 2 })).toEqual({ capacity: 2 });
    expect(validatePolicyBudget({ keepRatio: 1, every: 1 })).toEqual({ keepRatio: 1, every: 1 });
    const extra = { capacity: 8, note: 'dropped' } as PolicyBudget;
    expect(validatePolicyBudget(extra)).toEqual({ capacity: 8 });
  });

  it('refuses a mixed, empty or malformed budget, naming the field', () => {
    const bad: [unknown, string][] = [
      [null, 'budget'],
      [{}, 'budget'],
      [{ capacity: 8, keepRatio: 0.5, every: 4 }, 'budget'],
      [{ capacity: 8, every: 4 }, 'budget'],
      [{ capacity: 1 }, 'budget.capacity'],
      [{ capacity: 2.5 }, 'budget.capacity'],
      [{ keepRatio: 0, every: 4 }, 'budget.keepRatio'],
      [{ keepRatio: 1.01, every: 4 }, 'budget.keepRatio'],
      [{ keepRatio: Number.NaN, every: 4 }, 'budget.keepRatio'],
      [{ keepRatio: 0.5 }, 'budget.every'],
      [{ keepRatio: 0.5, every: 0 }, 'budget.every'],
      [{ keepRatio: 0.5, every: 1.5 }, 'budget.every'],
    ];
    for (const [budget, argument] of bad) {
      expectLetheError(() => validatePolicyBudget(budget as PolicyBudget), 'E_BUDGET', argument);
    }
  });

  it('tells the forms apart, and a capacity-only provider refuses a rate schedule', () => {
    expect(isRateBudget({ keepRatio: 0.5, every: 16 })).toBe(true);
    expect(isRateBudget({ capacity: 16 })).toBe(false);
    expect(requireCapacityBudget({ capacity: 16 }, 'x')).toEqual({ capacity: 16 });
    expectLetheError(
      () => requireCapacityBudget({ keepRatio: 0.5, every: 16 }, 'x'),
      'E_BUDGET',
      'budget',
    );
  });
});
