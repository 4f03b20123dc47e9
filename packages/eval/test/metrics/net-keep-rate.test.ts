import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  keepFractions,
  netKeepRate,
  normalisedPrecision,
  realisedKeepRate,
} from '../../src/metrics/index';

describe('netKeepRate (SOL)', () => {
  it('averages the three realised axes when all are enabled', () => {
    expect(
      netKeepRate({ attention: 0.4, mlp: 0.8, precision: normalisedPrecision(8) }),
    ).toBeCloseTo((0.4 + 0.8 + 0.5) / 3, 14);
  });

  it('averages over the enabled subset only', () => {
    expect(netKeepRate({ attention: 0.3 })).toBe(0.3);
    expect(netKeepRate({ attention: 0.3, precision: 1 })).toBeCloseTo(0.65, 14);
  });

  it('rejects no axes and out-of-range rates', () => {
    expectLetheError(() => netKeepRate({}), 'E_ARG', 'axes');
    expectLetheError(() => netKeepRate({ attention: 1.2 }), 'E_ARG', 'axes.attention');
    expectLetheError(() => netKeepRate({ mlp: Number.NaN }), 'E_ARG', 'axes.mlp');
    expectLetheError(() => netKeepRate({ precision: -0.1 }), 'E_ARG', 'axes.precision');
  });
});

describe('realisedKeepRate (SOL eq. 2)', () => {
  it('averages over effective steps only', () => {
    const perStep = [1, 0.5, 0.25, 0.25];
    expect(realisedKeepRate(perStep)).toBeCloseTo(0.5, 14);
    // The first step is not effective (only sink/window tokens exist): it does not count.
    expect(realisedKeepRate(perStep, [false, true, true, true])).toBeCloseTo(1 / 3, 14);
  });

  it('rejects empty input, bad fractions, mismatched masks and no effective step', () => {
    expectLetheError(() => realisedKeepRate([]), 'E_ARG', 'perStep');
    expectLetheError(() => realisedKeepRate([0.5, 2]), 'E_ARG', 'perStep[1]');
    expectLetheError(() => realisedKeepRate([0.5, 0.5], [true]), 'E_SHAPE', 'effective');
    expectLetheError(() => realisedKeepRate([0.5], [false]), 'E_ARG', 'effective');
  });
});

describe('keepFractions', () => {
  it('divides the keys read by the keys available at each step', () => {
    // A cache capped at 64 entries while the full cache grows from 64 to 256 keys.
    const available = [64, 128, 192, 256];
    const kept = [64, 64, 64, 64];
    const fractions = keepFractions(kept, available);
    expect(fractions).toEqual([1, 0.5, 1 / 3, 0.25]);
    expect(realisedKeepRate(fractions)).toBeCloseTo((1 + 0.5 + 1 / 3 + 0.25) / 4, 14);
  });

  it('rejects negative counts, kept > available and empty or mismatched arrays', () => {
    expectLetheError(() => keepFractions([], []), 'E_ARG', 'kept');
    expectLetheError(() => keepFractions([1], [1, 2]), 'E_SHAPE', 'available');
    expectLetheError(() => keepFractions([-1], [4]), 'E_ARG', 'kept[0]');
    expectLetheError(() => keepFractions([5], [4]), 'E_ARG', 'kept[0]');
    expectLetheError(() => keepFractions([0], [0]), 'E_ARG', 'available[0]');
  });
});

describe('normalisedPrecision', () => {
  it('is q/16 and rejects bit widths outside 1..16', () => {
    expect(normalisedPrecision(16)).toBe(1);
    expect(normalisedPrecision(4)).toBe(0.25);
    expectLetheError(() => normalisedPrecision(0), 'E_ARG', 'bits');
    expectLetheError(() => normalisedPrecision(17), 'E_ARG', 'bits');
    expectLetheError(() => normalisedPrecision(4.5), 'E_ARG', 'bits');
  });
});
