import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  budgetForm,
  isComputeBudget,
  isRateBudget,
  isReadBudget,
  type PolicyBudget,
  requireCapacityBudget,
  validatePolicyBudget,
} from '../src/index';

describe('validatePolicyBudget', () => {
  it('returns a plain copy of each form', () => {
    expect(validatePolicyBudget({ capacity: 2 })).toEqual({ capacity: 2 });
    const targets = { tokenKeep: 0, mlpInputKeep: 0.5, precision: 1 };
    expect(validatePolicyBudget({ targets, note: 1 } as PolicyBudget)).toEqual({ targets });
    expect(validatePolicyBudget({ keepRatio: 1, every: 1 })).toEqual({ keepRatio: 1, every: 1 });
    expect(validatePolicyBudget({ readTokens: 1, note: 1 } as PolicyBudget)).toEqual({
      readTokens: 1,
    });
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
      [{ capacity: 8, targets: { tokenKeep: 1, mlpInputKeep: 1, precision: 1 } }, 'budget'],
      [{ targets: null }, 'budget.targets'],
      [{ targets: [0.5, 0.5, 0.5] }, 'budget.targets'],
      [{ targets: { tokenKeep: 1, mlpInputKeep: 1, precision: 1, bits: 8 } }, 'budget.targets'],
      [{ targets: { tokenKeep: 1.5, mlpInputKeep: 1, precision: 1 } }, 'budget.targets.tokenKeep'],
      [
        { targets: { tokenKeep: 1, mlpInputKeep: -0.1, precision: 1 } },
        'budget.targets.mlpInputKeep',
      ],
      [{ targets: { tokenKeep: 1, mlpInputKeep: 1 } }, 'budget.targets.precision'],
      [
        { targets: { tokenKeep: 1, mlpInputKeep: 1, precision: Number.NaN } },
        'budget.targets.precision',
      ],
      [{ readTokens: 0 }, 'budget.readTokens'],
      [{ readTokens: 2.5 }, 'budget.readTokens'],
      [{ readTokens: '8' }, 'budget.readTokens'],
      [{ readTokens: Number.POSITIVE_INFINITY }, 'budget.readTokens'],
      [{ readTokens: 8, capacity: 8 }, 'budget'],
      [{ readTokens: 8, keepRatio: 0.5, every: 4 }, 'budget'],
    ];
    for (const [budget, argument] of bad) {
      expectLetheError(() => validatePolicyBudget(budget as PolicyBudget), 'E_BUDGET', argument);
    }
  });

  it('tells the forms apart, and a capacity-only provider refuses the others', () => {
    const compute = { targets: { tokenKeep: 0.5, mlpInputKeep: 1, precision: 1 } };
    expect(isRateBudget({ keepRatio: 0.5, every: 16 })).toBe(true);
    expect(isRateBudget({ capacity: 16 })).toBe(false);
    expect([isComputeBudget(compute), isComputeBudget({ capacity: 16 })]).toEqual([true, false]);
    expect([isReadBudget({ readTokens: 8 }), isReadBudget({ capacity: 8 })]).toEqual([true, false]);
    expect(
      [compute, { capacity: 4 }, { keepRatio: 0.5, every: 2 }, { readTokens: 8 }].map((b) =>
        budgetForm(b),
      ),
    ).toEqual(['compute', 'capacity', 'rate', 'read']);
    expectLetheError(() => requireCapacityBudget(compute, 'x'), 'E_BUDGET', 'budget');
    expectLetheError(() => requireCapacityBudget({ readTokens: 8 }, 'x'), 'E_BUDGET', 'budget');
    expect(requireCapacityBudget({ capacity: 16 }, 'x')).toEqual({ capacity: 16 });
    expectLetheError(
      () => requireCapacityBudget({ keepRatio: 0.5, every: 16 }, 'x'),
      'E_BUDGET',
      'budget',
    );
  });
});
