import { Rng } from '@lethe/core';
import { describe, expect, it } from 'vitest';
import { ActionSet, presetLevels } from '../../src/index';
import {
  type BudgetRanges,
  checkBudgetRanges,
  DEFAULT_BUDGET_RANGES,
  sampleBudgetTargets,
} from '../../src/train/index';

describe('budget target sampling', () => {
  it('defaults to App. B.1’s ranges', () => {
    expect(DEFAULT_BUDGET_RANGES).toEqual({
      tokenKeep: [0.1, 1],
      mlpInputKeep: [0.4, 1],
      precision: [0.3125, 1],
    });
  });

  it('draws every enabled axis inside its range, the same draws for the same seed', () => {
    const actions = new ActionSet(presetLevels('3L'));
    const draw = (seed: number) => {
      const rng = new Rng(seed);
      return Array.from({ length: 200 }, () =>
        sampleBudgetTargets(DEFAULT_BUDGET_RANGES, actions, rng),
      );
    };
    const targets = draw(1);
    for (const [kappa, rho, eta] of targets) {
      expect(kappa).toBeGreaterThanOrEqual(0.1);
      expect(kappa).toBeLessThanOrEqual(1);
      expect(rho).toBeGreaterThanOrEqual(0.4);
      expect(eta).toBeGreaterThanOrEqual(0.3125);
      expect(eta).toBeLessThanOrEqual(1);
    }
    // spread over the range, not stuck
    expect(Math.min(...targets.map((t) => t[0]))).toBeLessThan(0.2);
    expect(Math.max(...targets.map((t) => t[0]))).toBeGreaterThan(0.9);
    expect(draw(1)).toEqual(targets);
    expect(draw(2)).not.toEqual(targets);
  });

  it('gives an axis with a single level that level (no penalty can apply to it)', () => {
    const tokenOnly = new ActionSet({
      tokenKeep: [0.1, 0.5, 1],
      mlpInputKeep: [1],
      activationBits: [16],
    });
    const constantLow = new ActionSet({
      tokenKeep: [0.2, 1],
      mlpInputKeep: [0.5],
      activationBits: [8],
    });
    const rng = new Rng(3);
    for (let i = 0; i < 20; i++) {
      const [kappa, rho, eta] = sampleBudgetTargets(DEFAULT_BUDGET_RANGES, tokenOnly, rng);
      expect(kappa).toBeGreaterThanOrEqual(0.1);
      expect([rho, eta]).toEqual([1, 1]);
      const [, rhoLow, etaLow] = sampleBudgetTargets(DEFAULT_BUDGET_RANGES, constantLow, rng);
      expect([rhoLow, etaLow]).toEqual([0.5, 0.5]);
    }
  });

  it('takes a degenerate range [c, c] as the constant c', () => {
    const ranges: BudgetRanges = {
      tokenKeep: [0.3, 0.3],
      mlpInputKeep: [0.4, 1],
      precision: [1, 1],
    };
    const [kappa, , eta] = sampleBudgetTargets(
      ranges,
      new ActionSet(presetLevels('2L')),
      new Rng(0),
    );
    expect(kappa).toBeCloseTo(0.3, 12);
    expect(eta).toBe(1);
  });

  it('refuses ranges outside [0, 1], reversed or malformed, naming the axis', () => {
    const bad: [unknown, string][] = [
      [{ ...DEFAULT_BUDGET_RANGES, tokenKeep: [0.5, 0.2] }, 'budgetRanges.tokenKeep'],
      [{ ...DEFAULT_BUDGET_RANGES, mlpInputKeep: [-0.1, 1] }, 'budgetRanges.mlpInputKeep'],
      [{ ...DEFAULT_BUDGET_RANGES, precision: [0.5, 1.5] }, 'budgetRanges.precision'],
      [{ ...DEFAULT_BUDGET_RANGES, precision: [0.5] }, 'budgetRanges.precision'],
      [{ ...DEFAULT_BUDGET_RANGES, tokenKeep: [Number.NaN, 1] }, 'budgetRanges.tokenKeep'],
      [null, 'budgetRanges'],
    ];
    for (const [ranges, argument] of bad) {
      expect(() => checkBudgetRanges(ranges as BudgetRanges)).toThrow(
        expect.objectContaining({ code: 'E_ARG', argument }),
      );
    }
  });
});
