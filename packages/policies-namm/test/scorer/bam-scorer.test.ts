import { expectClose } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BamScorer } from '../../src/scorer/bam-scorer';
import { scorerParameterCount } from '../../src/scorer/genome-layout';
import { createScorer } from '../../src/scorer/scorer';
import type { BamScorerSpec } from '../../src/scorer/scorer-spec';
import { randomArray, referenceBam } from './reference';

/** A scorer with a seeded random genome, its genome, and a scoring helper. */
function randomBam(features: number, hidden: number, seed: number, scale = 1) {
  const spec: BamScorerSpec = { kind: 'bam', features, hidden };
  const genome = randomArray(new Float64Array(scorerParameterCount(spec)), seed, scale);
  const scorer = createScorer(spec, genome);
  const score = (x: Float32Array, n: number) => {
    const out = new Float32Array(n);
    scorer.score(x, n, out);
    return out;
  };
  return { spec, genome, scorer, score };
}

describe('BAM scorer', () => {
  it('matches the float64 reference on random genomes and inputs (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer(),
        fc.constantFrom(0.1, 0.5, 1.5),
        (f, h, n, seed, scale) => {
          const { genome, score } = randomBam(f, h, seed, scale);
          const x = randomArray(new Float32Array(n * f), seed ^ 0x5bd1e995, 3);
          expectClose(score(x, n), referenceBam(genome, f, h, x, n), 1e-4, 1e-6);
        },
      ),
    );
  });

  it('matches the reference at the default size (F = 25, H = 32), Float32 genome too', () => {
    const f = 25;
    const n = 67;
    const x = randomArray(new Float32Array(n * f), 3, 2);
    const { genome, score } = randomBam(f, 32, 11, 0.3);
    const expected = referenceBam(genome, f, 32, x, n);
    expectClose(score(x, n), expected, 1e-4, 1e-6);
    const out = new Float32Array(n);
    createScorer({ kind: 'bam', features: f, hidden: 32 }, Float32Array.from(genome)).score(
      x,
      n,
      out,
    );
    expectClose(out, referenceBam(Float32Array.from(genome), f, 32, x, n), 1e-4, 1e-6);
  });

  it('scores exactly 0 everywhere with the zero genome', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer(),
        (f, h, n, seed) => {
          const spec: BamScorerSpec = { kind: 'bam', features: f, hidden: h };
          const scorer = createScorer(spec, new Float64Array(scorerParameterCount(spec)));
          const out = new Float32Array(n).fill(7);
          scorer.score(randomArray(new Float32Array(n * f), seed, 100), n, out);
          expect(out).toEqual(new Float32Array(n));
        },
      ),
    );
  });

  it('never lets an older entry change a newer entry’s score, exactly (backward mask)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 20 }),
        fc.integer(),
        fc.nat(),
        fc.double({ min: -50, max: 50, noNaN: true }),
        (n, seed, pick, delta) => {
          const f = 5;
          const { score } = randomBam(f, 6, seed);
          const x = randomArray(new Float32Array(n * f), ~seed, 2);
          const before = score(x, n);
          const j = pick % (n - 1);
          const changed = x.slice();
          for (let c = 0; c < f; c++) changed[j * f + c]! += delta;
          changed[j * f] = Number.NaN; // not even NaN leaks forward
          const after = score(changed, n);
          expect(after.subarray(j + 1)).toEqual(before.subarray(j + 1));
        },
      ),
    );
  });

  it('lets a newer entry change every older entry’s score', () => {
    const f = 5;
    const n = 13;
    const { score } = randomBam(f, 6, 5);
    const x = randomArray(new Float32Array(n * f), 9, 2);
    const before = score(x, n);
    const changed = x.slice();
    for (let c = 0; c < f; c++) changed[(n - 1) * f + c]! += 0.5;
    const after = score(changed, n);
    for (let i = 0; i < n; i++) expect(after[i]).not.toBe(before[i]);
  });

  it('scores the newest entry as if it were alone, and n = 1 works', () => {
    const f = 25;
    const { score, genome } = randomBam(f, 32, 21);
    for (const n of [1, 2, 5, 8, 9]) {
      const x = randomArray(new Float32Array(n * f), n, 2);
      const alone = score(x.slice((n - 1) * f), 1);
      expect(score(x, n)[n - 1]).toBe(alone[0]);
    }
    const x1 = randomArray(new Float32Array(f), 4, 2);
    expectClose(score(x1, 1), referenceBam(genome, f, 32, x1, 1), 1e-4, 1e-6);
  });

  it('depends on order: the oldest entry ignores the order of the rest, reversal does not', () => {
    const f = 6;
    const n = 10;
    const { score } = randomBam(f, 5, 8);
    const x = randomArray(new Float32Array(n * f), 12, 2);
    const base = score(x, n);
    // Shuffle entries 1..n−1: softmax over the same set, so s_0 changes by rounding only.
    const order = [0, 7, 2, 9, 4, 1, 8, 3, 6, 5];
    const shuffled = new Float32Array(n * f);
    order.forEach((from, to) => shuffled.set(x.subarray(from * f, from * f + f), to * f));
    expect(score(shuffled, n)[0]).toBeCloseTo(base[0]!, 4);
    // Reversing the whole cache: the scores are not the reversed scores.
    const reversed = new Float32Array(n * f);
    for (let i = 0; i < n; i++) reversed.set(x.subarray(i * f, i * f + f), (n - 1 - i) * f);
    const reversedScores = Array.from(score(reversed, n)).reverse();
    expect(reversedScores[0]).not.toBeCloseTo(base[0]!, 3);
  });

  it('stays finite for huge inputs (|x| ~ 1e3) at the default size', () => {
    const f = 25;
    const n = 300;
    const { score } = randomBam(f, 32, 2, 1);
    const out = score(randomArray(new Float32Array(n * f), 6, 1000), n);
    for (const s of out) expect(Number.isFinite(s)).toBe(true);
  });

  it('reuses its scratch across calls of any size; reads n rows only, writes n scores only', () => {
    const f = 4;
    const { spec, genome, scorer } = randomBam(f, 3, 17);
    const x = randomArray(new Float32Array(50 * f), 1, 2);
    for (const n of [3, 50, 7, 0, 21, 50, 1]) {
      const out = new Float32Array(n + 2).fill(9);
      scorer.score(x, n, out);
      const fresh = new Float32Array(n);
      new BamScorer(spec, genome).score(x.subarray(0, n * f), n, fresh);
      expect(out.subarray(0, n)).toEqual(fresh);
      expect(Array.from(out.subarray(n))).toEqual([9, 9]);
    }
  });

  it('copies its genome and reports its spec and parameter count', () => {
    const { genome, scorer, score } = randomBam(3, 2, 4);
    const x = randomArray(new Float32Array(12), 2, 1);
    const before = score(x, 4);
    genome.fill(0);
    expect(score(x, 4)).toEqual(before);
    expect(scorer.spec).toEqual({ kind: 'bam', features: 3, hidden: 2 });
    expect(scorer.parameterCount).toBe(46);
  });
});
