import { describe, expect, it } from 'vitest';
import { logAxis, niceAxis, scale, wantsLog } from '../../src/report/axis';

describe('niceAxis', () => {
  it('covers the data with ticks at 1, 2 or 5 × 10^k', () => {
    const axis = niceAxis([1152, 4480]);
    expect(axis.log).toBe(false);
    expect(axis.min).toBeLessThanOrEqual(1152);
    expect(axis.max).toBeGreaterThanOrEqual(4480);
    const steps = axis.ticks.slice(1).map((tick, i) => tick - axis.ticks[i]!);
    expect(new Set(steps).size).toBe(1);
    expect([100, 200, 500, 1000]).toContain(steps[0]);
    expect(axis.labels).toEqual(axis.ticks.map(String));
  });

  it('starts at zero on request, stays in its bounds and handles a single value', () => {
    expect(niceAxis([9.4, 51.2], { fromZero: true }).min).toBe(0);
    expect(niceAxis([0, 100], { fromZero: true, bounds: [0, 100] }).max).toBe(100);
    expect(niceAxis([0], { fromZero: true })).toMatchObject({ min: 0, max: 1 });
    const single = niceAxis([6.84]);
    expect(single.min).toBeLessThan(6.84);
    expect(single.max).toBeGreaterThan(6.84);
    expect(niceAxis([0.3, 0.81]).labels[1]).toMatch(/^\d\.\d$/);
  });

  it('maps the domain onto the pixel range, flipped when to < from', () => {
    const axis = niceAxis([0, 100], { fromZero: true });
    expect(scale(axis, axis.min, 360, 20)).toBe(360);
    expect(scale(axis, axis.max, 360, 20)).toBe(20);
  });
});

describe('logAxis', () => {
  it('covers a budget sweep with 1-2-5 ticks and maps decades to equal lengths', () => {
    const axis = logAxis([10.7, 25.4, 50.5, 100]);
    expect(axis.log).toBe(true);
    expect(axis.min).toBeLessThan(10.7);
    expect(axis.max).toBeGreaterThan(100);
    expect(axis.ticks).toEqual([10, 20, 50, 100]);
    expect(axis.labels).toEqual(['10', '20', '50', '100']);
    const width = (a: number, b: number) => scale(axis, b, 0, 1000) - scale(axis, a, 0, 1000);
    expect(width(10, 100)).toBeCloseTo(2 * width(10, Math.sqrt(1000)), 10);
    expect(width(2, 20)).toBeCloseTo(width(10, 100), 10);
  });

  it('spreads perplexities from 1.9 to 120 over decades, not into the bottom pixels', () => {
    const axis = logAxis([1.87, 1.91, 12, 130]);
    expect(axis.ticks).toEqual([2, 5, 10, 20, 50, 100]);
    // The informative 1.9–12 range gets over a third of the axis (a linear 0–150 axis: 7%).
    expect(scale(axis, 12, 0, 1) - scale(axis, 1.9, 0, 1)).toBeGreaterThan(1 / 3);
  });

  it('uses denser mantissas when a range would hold fewer than three ticks', () => {
    expect(logAxis([31, 308]).ticks).toEqual([50, 100, 200]);
    expect(logAxis([2.6, 9.5]).ticks).toEqual([3, 5, 10]);
    expect(logAxis([3.1, 4.4]).ticks).toEqual([3, 4]);
  });
});

describe('wantsLog', () => {
  it('asks for a log scale when positive values span a factor of 5 or more', () => {
    expect(wantsLog([10.7, 100])).toBe(true);
    expect(wantsLog([1.9, 120])).toBe(true);
    expect(wantsLog([50, 75, 100])).toBe(false);
    expect(wantsLog([0, 100])).toBe(false);
  });
});
