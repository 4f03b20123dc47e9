import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LOSS_CURVE_EVERY, lossCurve, withLoss } from '../src/loss-curve';

describe('the loss curve of a run', () => {
  it('averages each window of every updates, the last one possibly shorter', () => {
    expect(lossCurve([4, 2, 1], 2)).toEqual({ every: 2, means: [3, 1] });
    expect(lossCurve([], 2)).toEqual({ every: 2, means: [] });
    expect(lossCurve([1, null, 3], 2)).toBeUndefined();
    expect(LOSS_CURVE_EVERY).toBe(50);
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 20, noNaN: true }), { maxLength: 200 }),
        fc.integer({ min: 1, max: 60 }),
        (losses, every) => {
          const curve = lossCurve(losses, every)!;
          expect(curve.means.length).toBe(Math.ceil(losses.length / every));
          // Brute force: each window's mean, one loss at a time.
          curve.means.forEach((mean, w) => {
            let sum = 0;
            let n = 0;
            for (let s = w * every; s < Math.min(losses.length, (w + 1) * every); s++) {
              sum += losses[s]!;
              n++;
            }
            expect(Math.abs(mean - sum / n)).toBeLessThanOrEqual(5e-6 + 1e-12 * sum);
          });
        },
      ),
    );
  });

  it('keeps update s’s loss at entry s − 1: a redone update replaces it and drops later ones, a lost one is null', () => {
    let losses: (number | null)[] = [];
    for (let step = 1; step <= 5; step++) losses = withLoss(losses, step, step / 10);
    expect(losses).toEqual([0.1, 0.2, 0.3, 0.4, 0.5]);
    // A resume from the checkpoint after update 3 makes updates 4 and 5 again.
    expect(withLoss(losses, 4, 0.45)).toEqual([0.1, 0.2, 0.3, 0.45]);
    // A state from before losses were kept: the updates before the resume are unknown.
    expect(withLoss([], 3, 1.23456789)).toEqual([null, null, 1.234568]);
    expect(lossCurve(withLoss([], 3, 1))).toBeUndefined();
  });
});
