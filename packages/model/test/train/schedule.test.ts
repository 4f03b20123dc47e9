import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { constantSchedule, warmupCosineSchedule, warmupLinearSchedule } from '../../src/train';

describe('learning-rate schedules', () => {
  it('constant: the same value at every step', () => {
    const schedule = constantSchedule(3e-4);
    expect([0, 1, 1000, 1e9].map(schedule)).toEqual([3e-4, 3e-4, 3e-4, 3e-4]);
  });

  it('warmup + cosine: key steps', () => {
    const s = warmupCosineSchedule({
      peakLr: 1e-3,
      warmupSteps: 10,
      totalSteps: 110,
      minLrRatio: 0.1,
    });
    expect(s(0)).toBeCloseTo(1e-4, 15); // (0 + 1) / 10 of peak
    expect(s(4)).toBeCloseTo(5e-4, 15);
    expect(s(9)).toBeCloseTo(1e-3, 15); // warmup ends at the peak
    expect(s(10)).toBeCloseTo(1e-3, 15); // decay starts at the peak
    expect(s(60)).toBeCloseTo((1e-3 + 1e-4) / 2, 15); // half-way: mean of peak and floor
    expect(s(35)).toBeCloseTo(1e-4 + 0.9e-3 * 0.5 * (1 + Math.cos(Math.PI / 4)), 15);
    expect(s(109)).toBeCloseTo(1e-4 + 0.9e-3 * 0.5 * (1 + Math.cos((Math.PI * 99) / 100)), 15);
    expect(s(109)).toBeGreaterThan(1e-4);
    for (let step = 10; step < 109; step++) expect(s(step + 1)).toBeLessThanOrEqual(s(step));
  });

  it('warmup + linear: key steps, without warmup and with a zero floor', () => {
    const s = warmupLinearSchedule({ peakLr: 2, warmupSteps: 0, totalSteps: 100 });
    expect(s(0)).toBe(2);
    expect(s(50)).toBeCloseTo(1, 14);
    expect(s(75)).toBeCloseTo(0.5, 14);
    expect(s(99)).toBeCloseTo(0.02, 14);
    const w = warmupLinearSchedule({ peakLr: 1, warmupSteps: 4, totalSteps: 8, minLrRatio: 0.5 });
    expect([0, 1, 2, 3, 4, 5, 6, 7].map(w)).toEqual([0.25, 0.5, 0.75, 1, 1, 0.875, 0.75, 0.625]);
  });

  it('rejects bad options and steps outside the run with E_ARG naming the field', () => {
    const base = { peakLr: 1e-3, warmupSteps: 2, totalSteps: 10 };
    const cases: [() => unknown, string][] = [
      [() => constantSchedule(0), 'lr'],
      [() => constantSchedule(Number.NaN), 'lr'],
      [() => warmupCosineSchedule({ ...base, peakLr: -1 }), 'peakLr'],
      [() => warmupCosineSchedule({ ...base, warmupSteps: 1.5 }), 'warmupSteps'],
      [() => warmupCosineSchedule({ ...base, warmupSteps: -1 }), 'warmupSteps'],
      [() => warmupCosineSchedule({ ...base, totalSteps: 2 }), 'totalSteps'],
      [() => warmupLinearSchedule({ ...base, minLrRatio: 1.5 }), 'minLrRatio'],
      [() => warmupLinearSchedule({ ...base, minLrRatio: -0.1 }), 'minLrRatio'],
      [() => warmupCosineSchedule(base)(10), 'step'],
      [() => warmupCosineSchedule(base)(-1), 'step'],
      [() => warmupLinearSchedule(base)(2.5), 'step'],
      [() => constantSchedule(1)(-3), 'step'],
    ];
    for (const [fn, field] of cases) expectLetheError(fn, 'E_ARG', field);
  });
});
