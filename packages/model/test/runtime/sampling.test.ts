import { Rng } from '@lethe/tensor';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sampleToken, validateSampling } from '../../src/runtime/sampling';

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
});
