import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scorerParameterCount } from '../../src/scorer/genome-layout';
import { SCORE_MAGNITUDE_LIMIT, scorerMagnitudeBound } from '../../src/scorer/magnitude-bound';
import { createScorer } from '../../src/scorer/scorer';
import type { ScorerSpec } from '../../src/scorer/scorer-spec';

const specArb: fc.Arbitrary<ScorerSpec> = fc.oneof(
  fc.record({
    kind: fc.constant('bam' as const),
    features: fc.integer({ min: 1, max: 6 }),
    hidden: fc.integer({ min: 1, max: 5 }),
  }),
  fc.record({
    kind: fc.constant('mlp' as const),
    features: fc.integer({ min: 1, max: 6 }),
    depth: fc.integer({ min: 1, max: 3 }),
  }),
);

/** A spec, a genome of parameters within ±scale, features within ±bound, and n entries. */
const caseArb = specArb.chain((spec) =>
  fc.record({
    spec: fc.constant(spec),
    scale: fc.constantFrom(1, 1e3, 1e8),
    bound: fc.constantFrom(1, 16, 1e5),
    unitGenome: fc.array(fc.double({ min: -1, max: 1, noNaN: true }), {
      minLength: scorerParameterCount(spec),
      maxLength: scorerParameterCount(spec),
    }),
    unitFeatures: fc.array(fc.double({ min: -1, max: 1, noNaN: true }), {
      minLength: spec.features,
      maxLength: 6 * spec.features,
    }),
  }),
);

describe('scorerMagnitudeBound', () => {
  it('bounds every score of features within ±inputBound (fast-check)', () => {
    fc.assert(
      fc.property(caseArb, ({ spec, scale, bound, unitGenome, unitFeatures }) => {
        const genome = Float64Array.from(unitGenome, (x) => x * scale);
        const n = Math.floor(unitFeatures.length / spec.features);
        const x = Float32Array.from(unitFeatures.slice(0, n * spec.features), (v) => v * bound);
        const limit = scorerMagnitudeBound(spec, genome, bound);
        const out = new Float32Array(n);
        createScorer(spec, genome).score(x, n, out);
        for (const score of out) {
          if (limit < SCORE_MAGNITUDE_LIMIT) expect(Number.isFinite(score)).toBe(true);
          // float32 rounding of the score: at most 2^-24 relative.
          expect(Math.abs(score)).toBeLessThanOrEqual(limit * (1 + 2 ** -20));
        }
      }),
    );
  });

  it('is small for a genome of magnitude ~1 and past the limit with one parameter of 1e300', () => {
    const spec: ScorerSpec = { kind: 'bam', features: 25, hidden: 32 };
    const genome = Float64Array.from({ length: scorerParameterCount(spec) }, (_, i) => Math.sin(i));
    expect(scorerMagnitudeBound(spec, genome, 32)).toBeLessThan(1e7);
    genome[0] = 1e300;
    expect(scorerMagnitudeBound(spec, genome, 1)).toBeGreaterThan(SCORE_MAGNITUDE_LIMIT);
  });
});
