import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Budget, budgetKeepCount, validateBudget } from '../../src/selection/index';

describe('budget', () => {
  it('rounds keepRatio up and keeps at least one entry', () => {
    fc.assert(
      fc.property(
        fc.double({ min: Number.MIN_VALUE, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 5000 }),
        (keepRatio, live) => {
          const kept = budgetKeepCount({ keepRatio }, live);
          expect(Number.isInteger(kept)).toBe(true);
          if (live === 0) {
            expect(kept).toBe(0);
            return;
          }
          expect(kept).toBeGreaterThanOrEqual(1);
          expect(kept).toBeLessThanOrEqual(live);
          // ceil: the smallest integer ≥ ratio·live (within floating-point tolerance).
          expect(kept).toBeGreaterThanOrEqual(keepRatio * live - 1e-9 * live);
          expect(kept - 1).toBeLessThan(Math.max(1, keepRatio * live));
        },
      ),
    );
  });

  it('gives exact counts where the product is an integer despite float noise', () => {
    expect(budgetKeepCount({ keepRatio: 0.3 }, 10)).toBe(3);
    expect(budgetKeepCount({ keepRatio: 0.7 }, 10)).toBe(7);
    expect(budgetKeepCount({ keepRatio: 0.5 }, 7)).toBe(4);
    expect(budgetKeepCount({ keepRatio: 0.01 }, 7)).toBe(1);
    expect(budgetKeepCount({ keepRatio: 1 }, 9)).toBe(9);
  });

  it('caps a keep count at the live count', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), fc.integer({ min: 0, max: 500 }), (c, live) => {
        expect(budgetKeepCount({ keepCount: c }, live)).toBe(Math.min(c, live));
      }),
    );
  });

  it('rejects budgets outside (0, 1] and bad keep counts with E_BUDGET', () => {
    for (const keepRatio of [0, -0.1, 1.0001, 2, Number.NaN, Number.POSITIVE_INFINITY]) {
      expectLetheError(() => validateBudget({ keepRatio }), 'E_BUDGET', 'budget.keepRatio');
      expectLetheError(() => budgetKeepCount({ keepRatio }, 4), 'E_BUDGET');
    }
    for (const keepCount of [0, -3, 1.5, Number.NaN]) {
      expectLetheError(() => validateBudget({ keepCount }), 'E_BUDGET', 'budget.keepCount');
    }
    expectLetheError(() => validateBudget({} as Budget), 'E_BUDGET', 'budget');
    expectLetheError(
      () => validateBudget({ keepRatio: 0.5, keepCount: 3 } as unknown as Budget),
      'E_BUDGET',
      'budget',
    );
  });

  it('refuses a provider ceiling `{ capacity }` with E_BUDGET naming the argument', () => {
    // `capacity` is a CapacityBudget's ceiling (the newest token included), one more than a
    // round keeps: a selection budget takes `keepCount`, with no alias.
    for (const budget of [
      { capacity: 8 },
      { capacity: 8, keepRatio: 0.5 },
      { capacity: 8, keepCount: 7 },
    ]) {
      const error = expectLetheError(
        () => validateBudget(budget as unknown as Budget, 'options.budget'),
        'E_BUDGET',
        'options.budget',
      );
      expect(error.message).toMatch(/exactly one of `keepRatio` or `keepCount`/);
      expect(error.message).toMatch(/not `capacity`.*ceiling.*`\{ keepCount: C − 1 \}`/);
    }
    expectLetheError(
      () => budgetKeepCount({ capacity: 8 } as unknown as Budget, 10),
      'E_BUDGET',
      'budget',
    );
  });

  it('rejects a non-integer live count with E_ARG', () => {
    expectLetheError(() => budgetKeepCount({ keepCount: 3 }, 2.5), 'E_ARG', 'live');
    expectLetheError(() => budgetKeepCount({ keepCount: 3 }, -1), 'E_ARG', 'live');
  });
});
