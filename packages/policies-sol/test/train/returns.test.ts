import { processAdvantages } from '@lethe/rl-grpo';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_DISCOUNT, discountedReturns, penalisedReturns } from '../../src/train/index';

const rewards = fc.array(fc.double({ min: -20, max: 0, noNaN: true }), {
  minLength: 1,
  maxLength: 24,
});
const gamma = fc.double({ min: 0.01, max: 1, noNaN: true });

/** `G_t = Σ_{u ≥ t} γ^{u−t} r_u` term by term. */
function bruteForce(r: readonly number[], g: number): number[] {
  return r.map((_, t) => {
    let sum = 0;
    for (let u = t; u < r.length; u++) sum += g ** (u - t) * r[u]!;
    return sum;
  });
}

describe('discountedReturns (eq. 3)', () => {
  it('equals the brute-force sum for any rewards and γ ∈ (0, 1]', () => {
    fc.assert(
      fc.property(rewards, gamma, (r, g) => {
        const got = discountedReturns(r, g);
        bruteForce(r, g).forEach((expected, t) => {
          expect(got[t]).toBeCloseTo(expected, 9);
        });
      }),
    );
  });

  it('defaults to γ = 0.85 and gives the plain sum at γ = 1', () => {
    expect(DEFAULT_DISCOUNT).toBe(0.85);
    expect(Array.from(discountedReturns([1, 2, 4]))).toEqual([
      1 + 0.85 * 2 + 0.85 ** 2 * 4,
      2 + 0.85 * 4,
      4,
    ]);
    expect(Array.from(discountedReturns([1, 2, 4], 1))).toEqual([7, 6, 4]);
  });

  it('refuses γ outside (0, 1] and non-finite rewards, naming them', () => {
    for (const g of [0, -0.5, 1.01, Number.NaN]) {
      expect(() => discountedReturns([1], g)).toThrow(
        expect.objectContaining({ code: 'E_ARG', argument: 'gamma' }),
      );
    }
    expect(() => discountedReturns([0, Number.NEGATIVE_INFINITY])).toThrow(
      expect.objectContaining({ code: 'E_ARG', argument: 'rewards[1]' }),
    );
  });
});

describe('penalisedReturns (eq. 4)', () => {
  it('subtracts the episode penalty from every step’s return', () => {
    fc.assert(
      fc.property(rewards, gamma, fc.double({ min: 0, max: 50, noNaN: true }), (r, g, c) => {
        const got = penalisedReturns(r, c, g);
        bruteForce(r, g).forEach((expected, t) => {
          expect(got[t]).toBeCloseTo(expected - c, 9);
        });
      }),
    );
  });

  it('refuses a negative or non-finite penalty', () => {
    expect(() => penalisedReturns([1], -1)).toThrow(
      expect.objectContaining({ argument: 'penalty' }),
    );
    expect(() => penalisedReturns([1], Number.NaN)).toThrow(
      expect.objectContaining({ argument: 'penalty' }),
    );
  });
});

describe('process-level advantages of the signals (processAdvantages)', () => {
  // B groups of K schedules of T steps, signals G_t − C.
  const batches = fc
    .record({
      groups: fc.integer({ min: 1, max: 3 }),
      k: fc.integer({ min: 2, max: 5 }),
      t: fc.integer({ min: 1, max: 6 }),
    })
    .chain(({ groups, k, t }) =>
      fc.record({
        k: fc.constant(k),
        t: fc.constant(t),
        signals: fc.array(
          fc.array(fc.double({ min: -30, max: 0, noNaN: true }), { minLength: t, maxLength: t }),
          { minLength: groups * k, maxLength: groups * k },
        ),
      }),
    );

  it('are centred per step within each group and whitened over the batch', () => {
    fc.assert(
      fc.property(batches, ({ k, t, signals }) => {
        const advantages = processAdvantages(signals, { groupSize: k });
        const all = advantages.flatMap((row) => Array.from(row));
        const mean = all.reduce((a, b) => a + b, 0) / all.length;
        const variance = all.reduce((a, b) => a + (b - mean) ** 2, 0) / all.length;
        expect(Math.abs(mean)).toBeLessThan(1e-4);
        // whitened to std 1 (up to the ε added to the std) unless the schedules barely differ
        const centred = signals.flatMap((row, i) => {
          const group = signals.slice(i - (i % k), i - (i % k) + k);
          return row.map((v, s) => v - group.reduce((a, r) => a + r[s]!, 0) / k);
        });
        const spread = Math.sqrt(centred.reduce((a, c) => a + c * c, 0) / centred.length);
        if (spread > 1e-2) expect(Math.sqrt(variance)).toBeCloseTo(1, 2);
        for (let g = 0; g < signals.length; g += k) {
          for (let s = 0; s < t; s++) {
            let sum = 0;
            for (let i = g; i < g + k; i++) sum += advantages[i]![s]!;
            expect(Math.abs(sum / k)).toBeLessThan(1e-3);
          }
        }
        // a larger signal than a group mate at the same step never gets a smaller advantage
        for (let i = 0; i < signals.length; i++) {
          const mate = i - (i % k);
          for (let s = 0; s < t; s++) {
            if (signals[i]![s]! > signals[mate]![s]! + 1e-9) {
              expect(advantages[i]![s]!).toBeGreaterThanOrEqual(advantages[mate]![s]!);
            }
          }
        }
      }),
    );
  });
});
