import { Rng } from '@lethe/core';
import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SAMPLING_TEMPERATURE, greedyAction, sampleAction } from '../src/index';

const softmax = (logits: readonly number[], temperature: number) => {
  const max = Math.max(...logits);
  const e = logits.map((l) => Math.exp((l - max) / temperature));
  const total = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / total);
};

describe('greedyAction', () => {
  it('is the argmax, ties to the lowest index', () => {
    expect(greedyAction(Float32Array.of(0.1, 2, -1, 2, 2))).toBe(1);
    expect(greedyAction(Float32Array.of(-3))).toBe(0);
    expect(greedyAction(Float32Array.of(Number.NEGATIVE_INFINITY, -1e30))).toBe(1);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -3, max: 3 }), { minLength: 1, maxLength: 20 }),
        (values) => {
          expect(greedyAction(Float32Array.from(values))).toBe(values.indexOf(Math.max(...values)));
        },
      ),
    );
  });

  it('refuses empty logits (E_SHAPE) and NaN (E_ARG)', () => {
    expectLetheError(() => greedyAction(new Float32Array(0)), 'E_SHAPE', 'logits');
    expectLetheError(() => greedyAction(Float32Array.of(0, Number.NaN)), 'E_ARG', 'logits');
  });
});

describe('sampleAction', () => {
  const logits = Float32Array.of(1, 0.5, -0.3, 2, 0, -4);

  it('is deterministic for a seed and draws one uniform per call', () => {
    const draw = (seed: number) => {
      const rng = new Rng(seed);
      return Array.from({ length: 50 }, () => sampleAction(logits, rng));
    };
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
    const rng = new Rng(9);
    sampleAction(logits, rng);
    expect(rng.state().counter).toBe(1);
  });

  it('draws from softmax(logits / 1.3) by default: frequencies within 5σ over 40,000 draws', () => {
    expect(DEFAULT_SAMPLING_TEMPERATURE).toBe(1.3);
    const n = 40_000;
    const rng = new Rng(11);
    const counts = new Array(logits.length).fill(0);
    for (let i = 0; i < n; i++) counts[sampleAction(logits, rng)]++;
    const expected = softmax(Array.from(logits), 1.3);
    const plain = softmax(Array.from(logits), 1);
    let distinguishable = false;
    expected.forEach((p, a) => {
      const sigma = Math.sqrt((p * (1 - p)) / n);
      expect(Math.abs(counts[a] / n - p)).toBeLessThan(5 * sigma);
      // temperature 1 would be told apart: some action is off by far more than 5σ there
      if (Math.abs(counts[a] / n - plain[a]!) > 10 * sigma) distinguishable = true;
    });
    expect(distinguishable).toBe(true);
    // and a chi-square statistic fits 5 degrees of freedom (P(χ²₅ > 25) ≈ 1.4e-4)
    const chi2 = expected.reduce((sum, p, a) => sum + (counts[a] - n * p) ** 2 / (n * p), 0);
    expect(chi2).toBeLessThan(25);
  });

  it('follows the temperature: low → greedy, high → near uniform; −∞ is never drawn', () => {
    const rng = new Rng(12);
    for (let i = 0; i < 200; i++) expect(sampleAction(logits, rng, 0.01)).toBe(3);
    const counts = new Array(logits.length).fill(0);
    for (let i = 0; i < 6000; i++) counts[sampleAction(logits, rng, 1e6)]++;
    for (const c of counts) expect(Math.abs(c - 1000)).toBeLessThan(150);
    const masked = Float32Array.of(Number.NEGATIVE_INFINITY, 0, Number.NEGATIVE_INFINITY);
    for (let i = 0; i < 100; i++) expect(sampleAction(masked, rng)).toBe(1);
  });

  it('refuses a bad temperature, NaN, +∞ or all −∞ logits', () => {
    const rng = new Rng(0);
    for (const t of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expectLetheError(() => sampleAction(logits, rng, t), 'E_ARG', 'temperature');
    }
    expectLetheError(() => sampleAction(Float32Array.of(Number.NaN), rng), 'E_ARG', 'logits');
    expectLetheError(
      () => sampleAction(Float32Array.of(0, Number.POSITIVE_INFINITY), rng),
      'E_ARG',
      'logits',
    );
    expectLetheError(
      () => sampleAction(Float32Array.of(Number.NEGATIVE_INFINITY), rng),
      'E_ARG',
      'logits',
    );
    expectLetheError(() => sampleAction(new Float32Array(0), rng), 'E_SHAPE', 'logits');
  });
});
