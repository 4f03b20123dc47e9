import { expectClose } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scorerParameterCount } from '../../src/scorer/genome-layout';
import { createScorer } from '../../src/scorer/scorer';
import type { MlpScorerSpec } from '../../src/scorer/scorer-spec';
import { randomArray, referenceMlp } from './reference';

/** A scorer with a seeded random genome, its genome, and a scoring helper. */
function randomMlp(features: number, depth: number, seed: number, scale = 1) {
  const spec: MlpScorerSpec = { kind: 'mlp', features, depth };
  const genome = randomArray(new Float64Array(scorerParameterCount(spec)), seed, scale);
  const scorer = createScorer(spec, genome);
  const score = (x: Float32Array, n: number) => {
    const out = new Float32Array(n);
    scorer.score(x, n, out);
    return out;
  };
  return { genome, scorer, score };
}

describe('MLP scorer', () => {
  it('matches the float64 reference on random genomes and inputs (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer(),
        fc.constantFrom(0.1, 0.5, 1.5),
        (f, depth, n, seed, scale) => {
          const { genome, score } = randomMlp(f, depth, seed, scale);
          const x = randomArray(new Float32Array(n * f), seed ^ 0x5bd1e995, 3);
          expectClose(score(x, n), referenceMlp(genome, f, depth, x, n), 1e-4, 1e-6);
        },
      ),
    );
  });

  it('matches the reference at the default size (F = 25, D = 2)', () => {
    const n = 40;
    const { genome, score, scorer } = randomMlp(25, 2, 3, 0.3);
    const x = randomArray(new Float32Array(n * 25), 5, 2);
    expectClose(score(x, n), referenceMlp(genome, 25, 2, x, n), 1e-4, 1e-6);
    expect(scorer.spec).toEqual({ kind: 'mlp', features: 25, depth: 2 });
    expect(scorer.parameterCount).toBe(1326);
  });

  it('scores exactly 0 everywhere with the zero genome', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer(),
        (f, depth, n, seed) => {
          const spec: MlpScorerSpec = { kind: 'mlp', features: f, depth };
          const scorer = createScorer(spec, new Float32Array(scorerParameterCount(spec)));
          const out = new Float32Array(n).fill(7);
          scorer.score(randomArray(new Float32Array(n * f), seed, 100), n, out);
          expect(out).toEqual(new Float32Array(n));
        },
      ),
    );
  });

  it('scores each entry on its own: permuting the entries permutes the scores exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 15 }), fc.integer(), (n, seed) => {
        const f = 7;
        const { score } = randomMlp(f, 2, seed);
        const x = randomArray(new Float32Array(n * f), ~seed, 2);
        const base = score(x, n);
        const reversed = new Float32Array(n * f);
        for (let i = 0; i < n; i++) reversed.set(x.subarray(i * f, i * f + f), (n - 1 - i) * f);
        expect(score(reversed, n).reverse()).toEqual(base);
        for (let i = 0; i < n; i++) expect(score(x.slice(i * f, i * f + f), 1)[0]).toBe(base[i]);
      }),
    );
  });

  it('stays finite for huge inputs (|x| ~ 1e3) at the default size', () => {
    const n = 300;
    const { score } = randomMlp(25, 2, 2, 1);
    const out = score(randomArray(new Float32Array(n * 25), 6, 1000), n);
    for (const s of out) expect(Number.isFinite(s)).toBe(true);
  });

  it('copies its genome; reads n rows only, writes n scores only', () => {
    const { genome, scorer, score } = randomMlp(3, 2, 4);
    const x = randomArray(new Float32Array(30), 2, 1);
    const before = score(x, 4);
    genome.fill(0);
    expect(score(x, 4)).toEqual(before);
    const out = new Float32Array(6).fill(9);
    scorer.score(x, 4, out);
    expect(out.subarray(0, 4)).toEqual(before);
    expect(Array.from(out.subarray(4))).toEqual([9, 9]);
  });
});
