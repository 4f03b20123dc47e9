import { Rng } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { logProbOf, sampleToken, validateSampling } from '../../src/runtime/sampling';

/** Brute-force distribution after temperature, top-k, top-p — written from the definitions. */
function reference(logits: number[], t: number, k: number, p: number): Map<number, number> {
  const idx = logits.map((_, i) => i).sort((a, b) => logits[b]! - logits[a]! || a - b);
  const kept = idx.slice(0, k > 0 ? k : logits.length);
  const z = kept.reduce((s, i) => s + Math.exp(logits[i]! / t), 0);
  const probs = kept.map((i) => Math.exp(logits[i]! / t) / z);
  let cut = kept.length;
  let mass = 0;
  for (let r = 0; r < kept.length; r++) {
    mass += probs[r]!;
    if (p < 1 && mass >= p) {
      cut = r + 1;
      break;
    }
  }
  const zz = probs.slice(0, cut).reduce((a, b) => a + b, 0);
  return new Map(kept.slice(0, cut).map((i, r) => [i, probs[r]! / zz]));
}

describe('sampleToken', () => {
  it('greedy returns the argmax (lowest index on ties)', () => {
    expect(sampleToken([0.1, 3, 3, -1], { temperature: 0 }, new Rng(0)).token).toBe(1);
  });

  it('empirical frequencies and log-probs match the brute-force distribution', () => {
    const logits = [2, 1.5, 0.3, -1, 0.9, 1.5];
    for (const [t, k, p] of [
      [1, 0, 1],
      [0.7, 3, 1],
      [1.3, 0, 0.8],
      [1, 4, 0.6],
    ] as const) {
      const ref = reference(logits, t, k, p);
      const rng = new Rng(5);
      const counts = new Map<number, number>();
      const n = 20_000;
      for (let i = 0; i < n; i++) {
        const s = sampleToken(logits, { temperature: t, topK: k, topP: p }, rng);
        expect(ref.has(s.token)).toBe(true);
        expect(s.logProb).toBeCloseTo(Math.log(ref.get(s.token)!), 10);
        counts.set(s.token, (counts.get(s.token) ?? 0) + 1);
      }
      for (const [tok, prob] of ref) expect((counts.get(tok) ?? 0) / n).toBeCloseTo(prob, 1);
    }
  });

  it('is deterministic for a seed', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { minLength: 2, maxLength: 20 }),
        fc.nat(),
        (logits, seed) => {
          const a = sampleToken(logits, { temperature: 1 }, new Rng(seed));
          const b = sampleToken(logits, { temperature: 1 }, new Rng(seed));
          expect(a).toEqual(b);
        },
      ),
    );
  });

  it('rejects bad options and NaN logits, naming the field', () => {
    expect(() => validateSampling({ temperature: -1 })).toThrowError(/sampling\.temperature/);
    expect(() => validateSampling({ topK: 1.5 })).toThrowError(/sampling\.topK/);
    expect(() => validateSampling({ topP: 0 })).toThrowError(/sampling\.topP/);
    expect(() => sampleToken([0, Number.NaN], {}, new Rng(1))).toThrowError(/logits/);
  });

  it('a vanishing temperature draws the argmax with log-prob 0, never NaN (regression)', () => {
    const logits = [1, 2, 3, 0.5];
    const rng = new Rng(3);
    for (const temperature of [1e-300, 1e-320, Number.MIN_VALUE]) {
      for (let i = 0; i < 200; i++) {
        expect(sampleToken(logits, { temperature }, rng)).toEqual({ token: 2, logProb: 0 });
      }
      expect(logProbOf(logits, 2, { temperature })).toBe(0);
      expect(logProbOf(logits, 0, { temperature })).toBe(Number.NEGATIVE_INFINITY);
    }
    // The limit of the softmax shares exact ties equally; extreme float32 logits stay finite.
    const tied = new Map<number, number>();
    for (let i = 0; i < 2000; i++) {
      const s = sampleToken([3, 1, 3], { temperature: 1e-320, topP: 0.9 }, rng);
      expect(s.logProb).toBeCloseTo(Math.log(0.5), 12);
      tied.set(s.token, (tied.get(s.token) ?? 0) + 1);
    }
    expect([...tied.keys()].sort()).toEqual([0, 2]);
    expect(tied.get(0)! / 2000).toBeCloseTo(0.5, 1);
    const extreme = [-3.4e38, 3.4e38, 0];
    expect(sampleToken(extreme, { temperature: 1e-30 }, rng)).toEqual({ token: 1, logProb: 0 });
    expect(sampleToken(extreme, { temperature: 1e30 }, rng).logProb).not.toBeNaN();
  });

  it('refuses NaN and +Infinity logits; −Infinity is probability 0 (regression)', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) {
      expectLetheError(() => sampleToken([1, bad, 3], {}, new Rng(1)), 'E_ARG', 'logits');
      expectLetheError(() => logProbOf([1, bad, 3], 0, {}), 'E_ARG', 'logits');
    }
    const minusInf = Number.NEGATIVE_INFINITY;
    expectLetheError(() => sampleToken([minusInf, minusInf], {}, new Rng(1)), 'E_ARG', 'logits');
    expectLetheError(() => sampleToken([], {}, new Rng(1)), 'E_ARG', 'logits');
    const rng = new Rng(2);
    for (let i = 0; i < 100; i++) {
      expect(sampleToken([minusInf, 0, minusInf], { topP: 0.5 }, rng)).toEqual({
        token: 1,
        logProb: 0,
      });
    }
    expect(logProbOf([minusInf, 0, 1], 0, { temperature: 0.5 })).toBe(minusInf);
  });

  it('refuses a sampling option that is not an object', () => {
    expectLetheError(() => validateSampling(null as never), 'E_ARG', 'sampling');
    expectLetheError(
      () => validateSampling({ temperature: null } as never),
      'E_ARG',
      'sampling.temperature',
    );
  });
});
