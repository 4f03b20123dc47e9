// min-p, the presence and frequency penalties and logit biases, against a brute-force
// distribution written from their definitions (OpenAI's for the penalties and biases, Hugging
// Face's / vLLM's for min-p), and the model's own log-probabilities (tokenLogProbs).
import { Rng } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  logProbOf,
  type SamplingOptions,
  sampleToken,
  tokenLogProbs,
  validateSampling,
} from '../../src/runtime/index';

/** The distribution sampleToken draws from, by brute force: bias and penalties, T, top-k, top-p, min-p. */
function reference(
  logits: number[],
  options: SamplingOptions,
  generated: number[],
): Map<number, number> {
  const { temperature: t = 1, topK = 0, topP = 1, minP = 0 } = options;
  const adjusted = logits.map((logit, j) => {
    const count = generated.filter((token) => token === j).length;
    return (
      logit +
      (options.logitBias?.get(j) ?? 0) -
      count * (options.frequencyPenalty ?? 0) -
      (count > 0 ? (options.presencePenalty ?? 0) : 0)
    );
  });
  const order = adjusted.map((_, i) => i).sort((a, b) => adjusted[b]! - adjusted[a]! || a - b);
  const kept = order.slice(0, topK > 0 ? topK : order.length);
  const z = kept.reduce((s, i) => s + Math.exp(adjusted[i]! / t), 0);
  const probs = kept.map((i) => Math.exp(adjusted[i]! / t) / z);
  let cut = kept.length;
  let mass = 0;
  for (let r = 0; r < kept.length && topP < 1; r++) {
    mass += probs[r]!;
    if (mass >= topP) {
      cut = r + 1;
      break;
    }
  }
  const survivors = kept.slice(0, cut).filter((_, r) => probs[r]! >= minP * probs[0]!);
  const total = survivors.reduce((s, i) => s + probs[kept.indexOf(i)]!, 0);
  return new Map(survivors.map((i) => [i, probs[kept.indexOf(i)]! / total]));
}

/**
 * Logits, thresholds and biases on grids (thresholds offset from round fractions): the implementation and the reference
 * compute the same masses and weight ratios along different float paths (`exp((l − max) / T)`
 * against `exp(l / T) / z`), so a top-p or min-p threshold within an ulp of one of them — a bias
 * of 1e-16 making near-ties, a top-p of exactly 0.2 over five tied tokens — may fall on either
 * side, which says nothing about either.
 */
const options = fc.record({
  temperature: fc.double({ min: 0.3, max: 2, noNaN: true }),
  topK: fc.integer({ min: 0, max: 6 }),
  topP: fc.oneof(
    fc.constant(1),
    fc.integer({ min: 200, max: 999 }).map((k) => k / 1000 - 3e-4),
  ),
  minP: fc.oneof(
    fc.constant(0),
    fc.integer({ min: 1, max: 90 }).map((k) => k / 100 - 3e-3),
  ),
  presencePenalty: fc.integer({ min: -8, max: 8 }).map((k) => k / 4),
  frequencyPenalty: fc.integer({ min: -8, max: 8 }).map((k) => k / 4),
  logitBias: fc
    .array(fc.tuple(fc.integer({ min: 0, max: 7 }), fc.integer({ min: -400, max: 400 })))
    .map((entries) => new Map(entries.map(([id, bias]) => [id, bias / 4]))),
});

describe('sampling adjustments', () => {
  it('every drawn token is in the brute-force support, with its log-probability', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.integer({ min: -32, max: 32 }).map((k) => k / 8),
          { minLength: 8, maxLength: 8 },
        ),
        options,
        fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 6 }),
        fc.nat(),
        (logits, sampling, generated, seed) => {
          const expected = reference(logits, sampling, generated);
          const drawn = sampleToken(logits, sampling, new Rng(seed), generated);
          expect(expected.has(drawn.token)).toBe(true);
          expect(drawn.logProb).toBeCloseTo(Math.log(expected.get(drawn.token)!), 9);
          for (let token = 0; token < logits.length; token++) {
            const p = expected.get(token);
            const lp = logProbOf(logits, token, sampling, generated);
            if (p === undefined) expect(lp).toBe(Number.NEGATIVE_INFINITY);
            else expect(lp).toBeCloseTo(Math.log(p), 9);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('empirical frequencies follow the adjusted distribution', () => {
    const logits = [1, 0.5, 0.2, -0.3, 1.2];
    const sampling: SamplingOptions = {
      temperature: 0.8,
      minP: 0.2,
      presencePenalty: 0.4,
      frequencyPenalty: 0.3,
      logitBias: new Map([[3, 1.5]]),
    };
    const generated = [0, 0, 4];
    const expected = reference(logits, sampling, generated);
    const rng = new Rng(11);
    const counts = new Map<number, number>();
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const { token } = sampleToken(logits, sampling, rng, generated);
      counts.set(token, (counts.get(token) ?? 0) + 1);
    }
    for (const [token, p] of expected) expect((counts.get(token) ?? 0) / n).toBeCloseTo(p, 1);
  });

  it('greedy follows the penalties and biases; −100 all but bans a token', () => {
    expect(sampleToken([3, 2], { temperature: 0 }, new Rng(0), [0, 0]).token).toBe(0);
    expect(
      sampleToken([3, 2], { temperature: 0, frequencyPenalty: 1 }, new Rng(0), [0, 0]).token,
    ).toBe(1);
    expect(
      sampleToken([3, 2], { temperature: 0, logitBias: new Map([[0, -100]]) }, new Rng(0)).token,
    ).toBe(1);
  });

  it('refuses bad adjustments, naming the field', () => {
    expectLetheError(() => validateSampling({ minP: 1.5 }), 'E_ARG', 'sampling.minP');
    expectLetheError(
      () => validateSampling({ presencePenalty: Number.NaN }),
      'E_ARG',
      'sampling.presencePenalty',
    );
    expectLetheError(
      () => validateSampling({ frequencyPenalty: Number.POSITIVE_INFINITY }),
      'E_ARG',
      'sampling.frequencyPenalty',
    );
    expectLetheError(
      () => validateSampling({ logitBias: { 3: 1 } as never }),
      'E_ARG',
      'sampling.logitBias',
    );
    expectLetheError(
      () => validateSampling({ logitBias: new Map([[12, 1]]) }, 10),
      'E_ARG',
      'sampling.logitBias',
    );
    expectLetheError(
      () => validateSampling({ logitBias: new Map([[1, Number.NaN]]) }),
      'E_ARG',
      'sampling.logitBias',
    );
  });
});

describe('tokenLogProbs', () => {
  it('is log softmax at temperature 1, its top list sorted, whatever the other options', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -30, max: 30, noNaN: true }), { minLength: 1, maxLength: 40 }),
        fc.nat(),
        fc.integer({ min: 0, max: 45 }),
        (drawn, pick, top) => {
          // the model's logits are float32
          const logits = Float32Array.from(drawn);
          const token = pick % logits.length;
          const z = Array.from(logits).reduce((s, l) => s + Math.exp(l), 0);
          const got = tokenLogProbs(logits, token, top);
          expect(got.logProb).toBeCloseTo(logits[token]! - Math.log(z), 9);
          const expectedTop = Array.from(logits, (_, i) => i)
            .sort((a, b) => logits[b]! - logits[a]! || a - b)
            .slice(0, top);
          expect(got.top.map((entry) => entry.token)).toEqual(expectedTop);
          for (const entry of got.top) {
            expect(entry.logProb).toBeCloseTo(logits[entry.token]! - Math.log(z), 9);
          }
        },
      ),
    );
  });

  it('does not overflow for large logits, and names bad arguments', () => {
    expect(tokenLogProbs(Float32Array.of(1000, 1000), 0).logProb).toBeCloseTo(Math.log(0.5), 12);
    expectLetheError(() => tokenLogProbs(Float32Array.of(1, 2), 2), 'E_ARG', 'token');
    expectLetheError(() => tokenLogProbs(Float32Array.of(1, 2), 0, -1), 'E_ARG', 'top');
    expectLetheError(() => tokenLogProbs(Float32Array.of(1, Number.NaN), 0), 'E_ARG', 'logits');
    expectLetheError(
      () => tokenLogProbs(Float32Array.of(Number.NEGATIVE_INFINITY), 0),
      'E_ARG',
      'logits',
    );
  });
});
