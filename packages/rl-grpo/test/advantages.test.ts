import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupAdvantages, processAdvantages } from '../src/index';

describe('groupAdvantages', () => {
  it('Dr. GRPO subtracts the group mean only', () => {
    const a = groupAdvantages([1, 0, 0, 1, 1, 1, 1, 1], { groupSize: 4 });
    expect(Array.from(a)).toEqual([0.5, -0.5, -0.5, 0.5, 0, 0, 0, 0]);
  });

  it('GRPO divides by the population standard deviation plus ε', () => {
    const a = groupAdvantages([1, 0, 0, 1, 3, 3], {
      groupSize: 2,
      normalization: 'std',
      epsilon: 0,
    });
    // Groups [1, 0], [0, 1]: mean 0.5, std 0.5; [3, 3]: std 0 → 0 / (0 + ε) stays 0 with ε = 0 only
    // because the numerator is 0 as well.
    expect(Array.from(a.slice(0, 4))).toEqual([1, -1, -1, 1]);
    const withEpsilon = groupAdvantages([2, 0], { groupSize: 2, normalization: 'std' });
    expect(withEpsilon[0]).toBeCloseTo(1 / (1 + 1e-6), 6);
    expect(Array.from(groupAdvantages([3, 3], { groupSize: 2, normalization: 'std' }))).toEqual([
      0, 0,
    ]);
  });

  it('centres every group (property) and GRPO gives unit spread', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { minLength: 1, maxLength: 6 }),
        (groups, base) => {
          const rewards = Array.from({ length: groups }, (_, g) =>
            base.map((r, i) => r + g * (i % 2)),
          ).flat();
          const size = base.length;
          const dr = groupAdvantages(rewards, { groupSize: size });
          const std = groupAdvantages(rewards, {
            groupSize: size,
            normalization: 'std',
            epsilon: 0,
          });
          for (let g = 0; g < groups; g++) {
            const row = Array.from(dr.slice(g * size, (g + 1) * size));
            expect(Math.abs(row.reduce((a, b) => a + b, 0))).toBeLessThan(1e-5);
            const spread = Math.sqrt(row.reduce((a, b) => a + b * b, 0) / size);
            if (spread > 1e-6) {
              const normalised = Array.from(std.slice(g * size, (g + 1) * size));
              const unit = Math.sqrt(normalised.reduce((a, b) => a + b * b, 0) / size);
              expect(unit).toBeCloseTo(1, 5);
            }
          }
        },
      ),
    );
  });

  it('rejects bad input naming it', () => {
    expect(() => groupAdvantages([1, Number.NaN], { groupSize: 2 })).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'rewards[1]' }),
    );
    expect(() => groupAdvantages([1, 2, 3, 4], { groupSize: 3 })).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'groupSize' }),
    );
    expect(() => groupAdvantages([1, 2], { groupSize: 0 })).toThrowError(
      expect.objectContaining({ argument: 'groupSize' }),
    );
    expect(() => groupAdvantages([1, 2], { groupSize: 2, epsilon: -1 })).toThrowError(
      expect.objectContaining({ argument: 'epsilon' }),
    );
  });
});

describe('processAdvantages (SOL)', () => {
  it('centres each step across the group, then whitens globally', () => {
    const [a, b] = processAdvantages(
      [
        [1, 2],
        [3, 2],
      ],
      { groupSize: 2, epsilon: 0 },
    );
    // Step means [2, 2] → centred [[-1, 0], [1, 0]]; global mean 0, std √0.5.
    expect(a![0]).toBeCloseTo(-Math.SQRT2, 6);
    expect(b![0]).toBeCloseTo(Math.SQRT2, 6);
    expect([a![1], b![1]]).toEqual([0, 0]);
  });

  it('handles several groups with their own step counts', () => {
    const rows = processAdvantages([[0, 1, 2], [2, 1, 0], [5], [7]], { groupSize: 2, epsilon: 0 });
    // Centred: [-1, 0, 1], [1, 0, -1], [-1], [1] → mean 0, std √(6/8).
    const s = Math.sqrt(6 / 8);
    const expected = [[-1 / s, 0, 1 / s], [1 / s, 0, -1 / s], [-1 / s], [1 / s]];
    rows.forEach((row, i) => {
      expect(row).toHaveLength(expected[i]!.length);
      row.forEach((v, t) => expect(v).toBeCloseTo(expected[i]![t]!, 6));
    });
  });

  it('rejects non-finite rewards and ragged groups naming them', () => {
    expect(() =>
      processAdvantages(
        [
          [1, Number.POSITIVE_INFINITY],
          [0, 0],
        ],
        { groupSize: 2 },
      ),
    ).toThrowError(expect.objectContaining({ code: 'E_ARG', argument: 'stepRewards[0][1]' }));
    expect(() => processAdvantages([[1, 2], [0]], { groupSize: 2 })).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'stepRewards[1]' }),
    );
  });
});
