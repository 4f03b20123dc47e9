import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BUDGET_FEATURES,
  budgetPenalty,
  EpisodeBudget,
  hingePenalty,
  targetVector,
} from '../src/index';

describe('budget penalty (§4, eq. 2)', () => {
  it('is zero inside the band and the squared excess outside it', () => {
    expect(hingePenalty(0.02)).toBe(0);
    expect(hingePenalty(-0.019)).toBe(0);
    expect(hingePenalty(0.12)).toBeCloseTo(0.01, 12);
    expect(hingePenalty(-0.12)).toBeCloseTo(0.01, 12);
    // α = 100 / 100 / 200: κ̄ 0.1 above, ρ̄ in band, η̄ 0.07 below
    expect(budgetPenalty([0.6, 0.81, 0.43], [0.5, 0.8, 0.5])).toBeCloseTo(
      100 * 0.08 ** 2 + 200 * 0.05 ** 2,
      10,
    );
    expect(budgetPenalty(undefined, [0.5, 0.5, 0.5])).toBe(0);
  });

  it('targets must be finite and in [0, 1]', () => {
    expect(targetVector({ tokenKeep: 0, mlpInputKeep: 1, precision: 0.5 })).toEqual([0, 1, 0.5]);
    expectLetheError(
      () => targetVector({ tokenKeep: 1.2, mlpInputKeep: 1, precision: 1 }),
      'E_ARG',
      'targets.tokenKeep',
    );
    expectLetheError(
      () => targetVector({ tokenKeep: 1, mlpInputKeep: Number.NaN, precision: 1 }),
      'E_ARG',
      'targets.mlpInputKeep',
    );
    expectLetheError(() => targetVector(undefined as never), 'E_ARG', 'targets');
  });
});

describe('EpisodeBudget', () => {
  it('features s_t: progress, flag, targets and deviations of the running average', () => {
    const budget = new EpisodeBudget(4, [0.5, 0.8, 0.5]);
    expect(Array.from(budget.features(true))).toEqual(
      Array.from(Float32Array.of(0.25, 1, 0.5, 0.8, 0.5, 0, 0, 0)),
    );
    budget.record([0.1, 1, 1], true);
    budget.record([1, 1, 1], false); // not effective: ignored by the averages
    budget.record([0.3, 0.6, 0.5], true);
    const s = budget.features(false);
    expect(s.length).toBe(BUDGET_FEATURES);
    expect(s[0]).toBe(1);
    expect(s[1]).toBe(0);
    expect(Array.from(s.subarray(5))).toEqual(Array.from(Float32Array.of(-0.3, 0, 0.25)));
    expect(budget.realised()).toEqual([0.2, 0.8, 0.75]);
    budget.record([1, 1, 1], true);
    expect(budget.done).toBe(true);
  });

  it('the realised averages equal a direct mean over the effective steps', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.float({ min: 0, max: 1, noNaN: true }), fc.boolean()), {
          minLength: 1,
          maxLength: 20,
        }),
        (steps) => {
          const budget = new EpisodeBudget(steps.length, [0.5, 0.5, 0.5]);
          for (const [u, effective] of steps) budget.record([u, 1 - u, u / 2], effective);
          const counted = steps.filter(([, e]) => e).map(([u]) => u);
          const realised = budget.realised();
          if (counted.length === 0) {
            expect(realised).toBeUndefined();
            return;
          }
          const mean = counted.reduce((a, b) => a + b, 0) / counted.length;
          expect(realised![0]).toBeCloseTo(mean, 6);
          expect(realised![1]).toBeCloseTo(1 - mean, 6);
          expect(realised![2]).toBeCloseTo(mean / 2, 6);
        },
      ),
    );
  });

  it('rejects a horizon below 1', () => {
    expectLetheError(() => new EpisodeBudget(0, [1, 1, 1]), 'E_ARG', 'horizon');
    expectLetheError(() => new EpisodeBudget(2.5, [1, 1, 1]), 'E_ARG', 'horizon');
  });
});
