import { ActionSet, presetLevels } from '@lethe/policies-sol';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { actionSetNamed } from '../src/action-sets';
import { operatingPoint } from '../src/operating-points';

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
