import type { RandomSource } from '@lethe/kv-cache';
import { Rng } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  GUMBEL_UNIFORM_FLOOR,
  greedyTopK,
  gumbelTopKLogProb,
  sampleGumbelTopK,
} from '../src/index';
import { naiveLogProb, orderedSequences } from './helpers';

const NEG = Number.NEGATIVE_INFINITY;

/** Logits with large magnitudes and ties: values from a small pool or anywhere in ±80. */
const logit = fc.oneof(
  fc.constantFrom(-80, -3, 0, 0.5, 2, 80),
  fc.double({ min: -80, max: 80, noNaN: true, noDefaultInfinity: true }),
);
const logitsArb = fc.array(logit, { minLength: 1, maxLength: 6 });
/** The same, with some −∞ entries. */
const logitsWithInfinityArb = fc.array(
  fc.oneof({ weight: 4, arbitrary: logit }, fc.constant(NEG)),
  {
    minLength: 1,
    maxLength: 6,
  },
);

/** Relative closeness for log-probabilities (absolute below 1). */
function expectClose(actual: number, expected: number, tolerance: number): void {
  if (expected === NEG) {
    expect(actual).toBe(NEG);
    return;
  }
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(
    tolerance * Math.max(1, Math.abs(expected)),
  );
}

describe('gumbelTopKLogProb (eq. 2)', () => {
  it('sums to one over every ordered k-sequence (brute force, N ≤ 6, every k)', () => {
    fc.assert(
      fc.property(logitsWithInfinityArb, (logits) => {
        for (let k = 0; k <= logits.length; k++) {
          let total = 0;
          for (const order of orderedSequences(logits.length, k)) {
            total += Math.exp(gumbelTopKLogProb(logits, order));
          }
          expect(Math.abs(total - 1)).toBeLessThanOrEqual(1e-9);
        }
      }),
      { numRuns: 150 },
    );
  });

  /** eq. 2 against the naive per-step log-sum-exp for logits from `arb` and any drawn order. */
  const matchesNaive = (arb: fc.Arbitrary<number[]>, numRuns: number): void => {
    fc.assert(
      fc.property(
        arb.chain((logits) =>
          fc.tuple(
            fc.constant(logits),
            fc.shuffledSubarray(
              logits.map((_, i) => i),
              { minLength: 0, maxLength: logits.length },
            ),
          ),
        ),
        ([logits, order]) => {
          expectClose(gumbelTopKLogProb(logits, order), naiveLogProb(logits, order), 1e-12);
        },
      ),
      { numRuns },
    );
  };

  it('equals a naive per-step log-sum-exp (random logits incl. ±80 and ties)', () => {
    matchesNaive(logitsArb, 500);
  });

  it('equals the naive form with −∞ logits too', () => {
    matchesNaive(logitsWithInfinityArb, 300);
  });

  it('stays exact when the logits span more than float64 exp range (online rescaling)', () => {
    const logits = [1000, 0, -1000, 999, -2000];
    // One global shift m = 1000 would give exp(−2000 − 1000) + … = 0 at the last steps (log 0).
    for (const order of [
      [0, 3, 1, 2, 4],
      [4, 2, 1],
      [2, 4],
      [1, 0],
    ]) {
      const value = gumbelTopKLogProb(logits, order);
      expect(Number.isFinite(value)).toBe(true);
      expectClose(value, naiveLogProb(logits, order), 1e-12);
    }
    // Drawing the tiny blocks first is (nearly) impossible but still finite.
    expect(gumbelTopKLogProb(logits, [4])).toBeCloseTo(-3000 - Math.log1p(Math.exp(-1)), 9);
  });

  it('hand values: uniform logits give −log(N (N−1) …); −∞ rules', () => {
    expect(gumbelTopKLogProb([0, 0, 0, 0], [2, 0])).toBeCloseTo(-Math.log(12), 12);
    expect(gumbelTopKLogProb([5], [])).toBe(0);
    expect(gumbelTopKLogProb([], [])).toBe(0);
    // One finite item: it must come first; then the two −∞ items uniformly.
    expect(gumbelTopKLogProb([0, NEG, NEG], [0, 2, 1])).toBeCloseTo(-Math.log(2), 12);
    expect(gumbelTopKLogProb([0, NEG, NEG], [0, 2])).toBeCloseTo(-Math.log(2), 12);
    expect(gumbelTopKLogProb([0, NEG, NEG], [1, 0])).toBe(NEG);
    expect(gumbelTopKLogProb([NEG, NEG, NEG], [1, 0, 2])).toBeCloseTo(-Math.log(6), 12);
  });

  it('validates its arguments', () => {
    expectLetheError(() => gumbelTopKLogProb([0, Number.NaN], [0]), 'E_ARG', 'logits');
    expectLetheError(
      () => gumbelTopKLogProb([0, Number.POSITIVE_INFINITY], [0]),
      'E_ARG',
      'logits',
    );
    expectLetheError(() => gumbelTopKLogProb([0, 1], [0, 0]), 'E_ARG', 'order');
    expectLetheError(() => gumbelTopKLogProb([0, 1], [2]), 'E_ARG', 'order');
    expectLetheError(() => gumbelTopKLogProb([0, 1], [-1]), 'E_ARG', 'order');
    expectLetheError(() => gumbelTopKLogProb([0, 1], [0.5]), 'E_ARG', 'order');
    expectLetheError(() => gumbelTopKLogProb([0, 1], [0, 1, 0]), 'E_ARG', 'order');
  });
});

describe('sampleGumbelTopK', () => {
  /** Empirical frequency of every ordered k-sequence vs exp(eq. 2) within 5 standard errors. */
  function checkFrequencies(logits: number[], k: number, draws: number, seed: number): void {
    const rng = new Rng(seed);
    const counts = new Map<string, number>();
    for (let d = 0; d < draws; d++) {
      const key = sampleGumbelTopK(logits, k, rng).join(',');
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    let total = 0;
    for (const order of orderedSequences(logits.length, k)) {
      const p = Math.exp(gumbelTopKLogProb(logits, order));
      total += p;
      const frequency = (counts.get(order.join(',')) ?? 0) / draws;
      // Binomial standard error; the 1/draws floor covers p ≈ 0 (a single stray count).
      const bound = 5 * Math.sqrt((p * (1 - p)) / draws) + 1 / draws;
      expect(
        Math.abs(frequency - p),
        `σ = ${order}: p ${p}, freq ${frequency}`,
      ).toBeLessThanOrEqual(bound);
      if (p === 0) expect(counts.get(order.join(','))).toBeUndefined();
    }
    expect(total).toBeCloseTo(1, 9);
  }

  it('draws ordered pairs with the probabilities of eq. 2 (N = 4, k = 2, 20,000 draws)', () => {
    checkFrequencies([1, 0.2, -0.5, 2], 2, 20_000, 11);
  });

  it('draws full permutations with −∞ items last, uniformly among themselves', () => {
    checkFrequencies([0.3, NEG, 1.2, NEG], 4, 20_000, 12);
  });

  it('is deterministic for a seed and draws exactly N uniforms', () => {
    const logits = [0.1, 3, -2, 0.5, 0.5, 1];
    const a = sampleGumbelTopK(logits, 3, new Rng(5));
    const b = sampleGumbelTopK(logits, 3, new Rng(5));
    expect([...a]).toEqual([...b]);
    let drawn = 0;
    const counting: RandomSource = {
      fillUniform: (out) => {
        drawn += out.length;
        return new Rng(5).fillUniform(out);
      },
    };
    expect([...sampleGumbelTopK(logits, 3, counting)]).toEqual([...a]);
    expect(drawn).toBe(logits.length);
    sampleGumbelTopK(logits, 0, counting);
    expect(drawn).toBe(2 * logits.length);
  });

  it('returns the k largest perturbed values in decreasing order (fixed uniforms)', () => {
    const uniforms = [0.5, 0.9, 0.1, 0.7];
    const source: RandomSource = {
      fillUniform: (out) => {
        out.set(uniforms);
        return out;
      },
    };
    const logits = [0, 0.2, 1, -0.3];
    const perturbed = logits.map((s, i) => s - Math.log(-Math.log(Math.fround(uniforms[i]!))));
    const expected = [0, 1, 2, 3].sort((a, b) => perturbed[b]! - perturbed[a]!);
    expect([...sampleGumbelTopK(logits, 4, source)]).toEqual(expected);
    expect([...sampleGumbelTopK(logits, 2, source)]).toEqual(expected.slice(0, 2));
  });

  it('guards u = 0 (finite noise; equal noise falls back to the logits, ties to the lower index)', () => {
    const zeros: RandomSource = { fillUniform: (out) => out.fill(0) };
    expect([...sampleGumbelTopK([0, 2, 1, 2], 4, zeros)]).toEqual([1, 3, 2, 0]);
    expect(-Math.log(-Math.log(GUMBEL_UNIFORM_FLOOR))).toBeCloseTo(-Math.log(149 * Math.LN2), 12);
  });

  it('validates k and logits', () => {
    const rng = new Rng(1);
    expectLetheError(() => sampleGumbelTopK([0, 1], 3, rng), 'E_ARG', 'k');
    expectLetheError(() => sampleGumbelTopK([0, 1], -1, rng), 'E_ARG', 'k');
    expectLetheError(() => sampleGumbelTopK([0, 1], 1.5, rng), 'E_ARG', 'k');
    expectLetheError(() => sampleGumbelTopK([Number.NaN, 1], 1, rng), 'E_ARG', 'logits');
    expect([...sampleGumbelTopK([], 0, rng)]).toEqual([]);
  });
});

describe('greedyTopK', () => {
  it('takes the k largest logits in decreasing order, ties to the lower index, −∞ last', () => {
    expect([...greedyTopK([0.1, 0.5, 0.5, NEG, 2, NEG], 6)]).toEqual([4, 1, 2, 0, 3, 5]);
    expect([...greedyTopK([0.1, 0.5, 0.5, NEG, 2], 2)]).toEqual([4, 1]);
    expect([...greedyTopK([3, 1], 0)]).toEqual([]);
  });

  it('agrees with a sort of the logits (property)', () => {
    fc.assert(
      fc.property(logitsWithInfinityArb, fc.nat(), (logits, pick) => {
        const k = pick % (logits.length + 1);
        const expected = logits
          .map((s, i) => ({ s, i }))
          .sort((a, b) => (a.s === b.s ? a.i - b.i : b.s > a.s ? 1 : -1))
          .slice(0, k)
          .map((x) => x.i);
        expect([...greedyTopK(logits, k)]).toEqual(expected);
      }),
    );
  });

  it('validates k and logits', () => {
    expectLetheError(() => greedyTopK([1, 2], 3), 'E_ARG', 'k');
    expectLetheError(() => greedyTopK([1, Number.POSITIVE_INFINITY], 1), 'E_ARG', 'logits');
  });
});
