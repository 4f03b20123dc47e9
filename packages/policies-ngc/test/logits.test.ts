import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  blockLogits,
  DEFAULT_NGC_LOGITS,
  LOG_SCORE_FLOOR,
  type NgcLogits,
  validateLogits,
} from '../src/index';

/** Probabilities of the first draw of eq. 2: softmax of the logits (float64). */
function firstDraw(logits: ArrayLike<number>): number[] {
  const values = Array.from(logits);
  const max = Math.max(...values);
  const weights = values.map((x) => Math.exp(x - max));
  const z = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / z);
}

/** Shannon entropy in nats. */
function entropy(p: readonly number[]): number {
  return -p.reduce((sum, x) => (x > 0 ? sum + x * Math.log(x) : sum), 0);
}

// A realistic round: 1,024 live entries in 32 blocks of 32; each query's attention sums to 1,
// so the mean entry score of block j is its attention mass m_j / 32 (masses ∝ (j + 1)², one
// block nearly ignored).
const BLOCKS = 32;
const masses = Array.from({ length: BLOCKS }, (_, j) => (j === 5 ? 1e-6 : (j + 1) ** 2));
const totalMass = masses.reduce((a, b) => a + b, 0);
const scores = masses.map((m) => m / totalMass / 32);
const massShare = masses.map((m) => m / totalMass);

describe('block logits: effect of each option on the block distribution', () => {
  const uniformEntropy = Math.log(BLOCKS);

  it("'score' (paper-literal): raw mean attention ≤ 1/32 gives an almost uniform first draw", () => {
    const h = entropy(firstDraw(blockLogits(scores, { kind: 'score' })));
    expect(uniformEntropy - h).toBeLessThan(1e-4);
    // The most-attended block (9% of the attention) is barely favoured over the ignored one:
    // their odds are exp(s_31 − s_5) = exp(0.0028).
    const p = firstDraw(blockLogits(scores, { kind: 'score' }));
    expect(p[31]! / p[5]!).toBeLessThan(1.003);
    expect(Math.log(p[31]! / p[5]!)).toBeCloseTo(
      Math.fround(scores[31]!) - Math.fround(scores[5]!),
      6,
    );
  });

  it("'log', τ = 1 (default): the first draw is proportional to attention mass", () => {
    const p = firstDraw(blockLogits(scores, DEFAULT_NGC_LOGITS));
    p.forEach((x, j) => {
      expect(x).toBeCloseTo(massShare[j]!, 6);
    });
    expect(entropy(p)).toBeCloseTo(entropy(massShare), 5);
    expect(entropy(p)).toBeLessThan(uniformEntropy - 0.2);
  });

  it("'log': entropy falls as τ falls (τ → 0 is greedy) and tends to uniform as τ grows", () => {
    const h = (temperature: number) =>
      entropy(firstDraw(blockLogits(scores, { kind: 'log', temperature })));
    const sweep = [0.01, 0.25, 0.5, 1, 2, 10, 1000].map(h);
    for (let i = 1; i < sweep.length; i++) expect(sweep[i]!).toBeGreaterThan(sweep[i - 1]!);
    expect(sweep[0]!).toBeLessThan(0.05); // nearly all mass on the top block
    expect(uniformEntropy - sweep[sweep.length - 1]!).toBeLessThan(1e-3);
  });

  it("'scaled': τ = 1 equals 'score'; a small τ sharpens exponentially in the score gaps", () => {
    expect([...blockLogits(scores, { kind: 'scaled', temperature: 1 })]).toEqual([
      ...blockLogits(scores, { kind: 'score' }),
    ]);
    const h = (temperature: number) =>
      entropy(firstDraw(blockLogits(scores, { kind: 'scaled', temperature })));
    expect(h(1e-2)).toBeLessThan(h(1));
    expect(h(1e-3)).toBeLessThan(h(1e-2));
    // Ratio of top to bottom block is exp((s_max − s_min) / τ).
    const p = firstDraw(blockLogits(scores, { kind: 'scaled', temperature: 1e-3 }));
    const gap = (Math.fround(scores[31]!) - Math.fround(scores[5]!)) / 1e-3;
    expect(Math.log(p[31]! / p[5]!)).toBeCloseTo(gap, 3);
  });
});

describe('blockLogits values', () => {
  it('computes s, log(max(s, floor))/τ and s/τ', () => {
    const s = [0.5, 0.01, 0, -0.1];
    expect([...blockLogits(s, { kind: 'score' })]).toEqual(s.map(Math.fround));
    expect([...blockLogits(s, { kind: 'log', temperature: 2 })]).toEqual(
      [
        Math.log(0.5) / 2,
        Math.log(0.01) / 2,
        Math.log(LOG_SCORE_FLOOR) / 2,
        Math.log(LOG_SCORE_FLOOR) / 2,
      ].map(Math.fround),
    );
    expect([...blockLogits(s, { kind: 'scaled', temperature: 0.5 })]).toEqual(
      [1, 0.02, 0, -0.2].map(Math.fround),
    );
    expect(Math.log(LOG_SCORE_FLOOR)).toBeCloseTo(-69.0776, 4);
  });

  it('validates scores and the choice', () => {
    expectLetheError(() => blockLogits([0.1, Number.NaN], { kind: 'score' }), 'E_ARG', 'scores');
    expectLetheError(
      () => blockLogits([Number.POSITIVE_INFINITY], { kind: 'score' }),
      'E_ARG',
      'scores',
    );
    const bad: unknown[] = [
      undefined,
      null,
      { kind: 'softmax' },
      { kind: 'log' },
      { kind: 'log', temperature: 0 },
      { kind: 'scaled', temperature: -1 },
      { kind: 'scaled', temperature: Number.NaN },
      { kind: 'log', temperature: Number.POSITIVE_INFINITY },
      { kind: 'log', temperature: '1' },
    ];
    for (const choice of bad) {
      expectLetheError(() => validateLogits(choice as NgcLogits), 'E_ARG', 'logits');
      expectLetheError(() => blockLogits([0.1], choice as NgcLogits), 'E_ARG', 'logits');
    }
    expect(validateLogits({ kind: 'score' })).toEqual({ kind: 'score' });
    expect(DEFAULT_NGC_LOGITS).toEqual({ kind: 'log', temperature: 1 });
  });
});
