import { ActionSet, presetLevels } from '@lethe/policies-sol';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { actionSetNamed } from '../src/action-sets';
import { operatingPoint } from '../src/operating-points';
import { pairedComparison } from '../src/paired-comparison';

describe('operatingPoint', () => {
  it('runs every controlled axis from its lowest to its highest level', () => {
    const actions = new ActionSet(presetLevels('2L'));
    expect(operatingPoint(actions, 0)).toEqual({
      tokenKeep: 0.1,
      mlpInputKeep: 0.6,
      precision: 5 / 16,
    });
    expect(operatingPoint(actions, 1)).toEqual({ tokenKeep: 1, mlpInputKeep: 1, precision: 1 });
    const half = operatingPoint(actions, 0.5);
    expect(half.tokenKeep).toBeCloseTo(0.55, 12);
    expect(half.mlpInputKeep).toBeCloseTo(0.8, 12);
    expect(half.precision).toBeCloseTo((5 / 16 + 1) / 2, 12);
    const tokenOnly = actionSetNamed('C-10');
    expect(operatingPoint(tokenOnly, 0.5)).toEqual({
      tokenKeep: 0.55,
      mlpInputKeep: 1,
      precision: 1,
    });
    expectLetheError(() => operatingPoint(actions, 1.5), 'E_ARG', 'point');
    expectLetheError(() => actionSetNamed('4L'), 'E_ARG', '--actions');
  });
});

describe('pairedComparison', () => {
  it('gives the mean, sd, t and win rate of the per-document differences', () => {
    const result = pairedComparison([1, 2, 3, 5], [2, 2, 4, 4]);
    // differences −1, 0, −1, 1: mean −0.25, sd √(2.75/3)
    expect(result.meanDifference).toBeCloseTo(-0.25, 12);
    expect(result.sdDifference).toBeCloseTo(Math.sqrt(2.75 / 3), 12);
    expect(result.t).toBeCloseTo(-0.25 / (Math.sqrt(2.75 / 3) / 2), 12);
    expect(result.winRate).toBe(0.5);
    expect(pairedComparison([1, 1], [1, 1]).t).toBe(0);
    expectLetheError(() => pairedComparison([], []), 'E_ARG', 'a');
    expectLetheError(() => pairedComparison([1], [1, 2]), 'E_SHAPE', 'b');
  });
});
