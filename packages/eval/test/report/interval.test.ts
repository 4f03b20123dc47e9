import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { meanInterval, studentT95, wilsonInterval, Z_95 } from '../../src/report/interval';

describe('wilsonInterval', () => {
  it('has the closed forms at 0 and n successes', () => {
    for (const n of [1, 20, 32, 256]) {
      const z2 = Z_95 ** 2;
      expect(wilsonInterval(0, n)).toEqual({ low: 0, high: expect.closeTo(z2 / (n + z2), 14) });
      expect(wilsonInterval(n, n)).toEqual({ low: expect.closeTo(n / (n + z2), 14), high: 1 });
    }
  });

  it("matches Newcombe's (1998) published intervals", () => {
    // Newcombe, Statistics in Medicine 17:857–872, table I, method 3 (score, no correction).
    const cases: [number, number, number, number][] = [
      [81, 263, 0.2553, 0.3662],
      [15, 148, 0.0624, 0.1605],
      [0, 20, 0, 0.1611],
      [1, 29, 0.0061, 0.1718],
    ];
    for (const [k, n, low, high] of cases) {
      const interval = wilsonInterval(k, n);
      expect(interval.low).toBeCloseTo(low, 4);
      expect(interval.high).toBeCloseTo(high, 4);
    }
  });

  it('is centred on (p̂ + z²/2n)/(1 + z²/n), mirrors k ↔ n − k, and holds p̂', () => {
    const z2 = Z_95 ** 2;
    for (const [k, n] of [
      [3, 10],
      [19, 32],
      [128, 256],
    ] as const) {
      const { low, high } = wilsonInterval(k, n);
      expect((low + high) / 2).toBeCloseTo((k / n + z2 / (2 * n)) / (1 + z2 / n), 14);
      const mirror = wilsonInterval(n - k, n);
      expect(mirror.low).toBeCloseTo(1 - high, 14);
      expect(mirror.high).toBeCloseTo(1 - low, 14);
      expect(low).toBeLessThan(k / n);
      expect(high).toBeGreaterThan(k / n);
    }
  });

  it('rejects impossible counts, naming the argument', () => {
    expectLetheError(() => wilsonInterval(0, 0), 'E_ARG', 'trials');
    expectLetheError(() => wilsonInterval(1.5, 4), 'E_ARG', 'successes');
    expectLetheError(() => wilsonInterval(-1, 4), 'E_ARG', 'successes');
    expectLetheError(() => wilsonInterval(5, 4), 'E_ARG', 'successes');
  });
});

describe('studentT95', () => {
  it('has the closed forms of ν = 1, 2 and 4', () => {
    // ν = 1 (Cauchy): tan(π(p − ½)); ν = 2: (2p − 1)/√(2p(1 − p)); ν = 4 with α = 4p(1 − p):
    // √(4 cos(⅓ arccos √α)/√α − 4). Here p = 0.975.
    const p = 0.975;
    const alpha = 4 * p * (1 - p);
    expect(studentT95(1)).toBeCloseTo(Math.tan(Math.PI * (p - 0.5)), 10);
    expect(studentT95(2)).toBeCloseTo((2 * p - 1) / Math.sqrt(2 * p * (1 - p)), 10);
    expect(studentT95(4)).toBeCloseTo(
      Math.sqrt((4 * Math.cos(Math.acos(Math.sqrt(alpha)) / 3)) / Math.sqrt(alpha) - 4),
      10,
    );
  });

  it('matches tabulated quantiles and tends to z', () => {
    expect(studentT95(10)).toBeCloseTo(2.228139, 6);
    expect(studentT95(31)).toBeCloseTo(2.039513, 6);
    expect(studentT95(1000)).toBeCloseTo(1.962339, 6);
    expect(studentT95(1_000_000)).toBeCloseTo(Z_95, 5);
  });

  it('decreases with ν, continuously across the switch to the expansion at ν = 1000', () => {
    const values = [1, 2, 3, 5, 8, 13, 31, 100, 999, 1000, 1001, 5000].map(studentT95);
    for (let i = 1; i < values.length; i++) expect(values[i]).toBeLessThan(values[i - 1]!);
    expect(studentT95(1000) - studentT95(1001)).toBeLessThan(1e-5);
  });

  it('rejects degrees of freedom that are not integers ≥ 1', () => {
    expectLetheError(() => studentT95(0), 'E_ARG', 'df');
    expectLetheError(() => studentT95(2.5), 'E_ARG', 'df');
  });
});

describe('meanInterval', () => {
  it('is mean ± t(n − 1)·SE, and the point itself for one value', () => {
    const interval = meanInterval({ mean: 1.91, stderr: 0.02, n: 32 });
    expect(interval.low).toBeCloseTo(1.91 - studentT95(31) * 0.02, 14);
    expect(interval.high).toBeCloseTo(1.91 + studentT95(31) * 0.02, 14);
    expect(meanInterval({ mean: 3, stderr: 0, n: 1 })).toEqual({ low: 3, high: 3 });
  });

  it('rejects a malformed aggregate, naming the field', () => {
    expectLetheError(
      () => meanInterval({ mean: Number.NaN, stderr: 0, n: 2 }),
      'E_ARG',
      'value.mean',
    );
    expectLetheError(() => meanInterval({ mean: 1, stderr: -1, n: 2 }), 'E_ARG', 'value.stderr');
    expectLetheError(() => meanInterval({ mean: 1, stderr: 0, n: 0 }), 'E_ARG', 'value.n');
  });
});
