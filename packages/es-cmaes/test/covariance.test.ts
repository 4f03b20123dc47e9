import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CMAES, DiagonalCovariance, FullCovariance } from '../src/index';
import { rotatedEllipsoid, symmetricPositiveDefinite } from './helpers';

describe('the covariance matrix stays symmetric positive definite', () => {
  it('after every update, on random problems, sizes, variants and NaN evaluations (property)', () => {
    fc.assert(
      fc.property(
        fc.record({
          n: fc.integer({ min: 1, max: 9 }),
          populationSize: fc.option(fc.integer({ min: 2, max: 40 }), { nil: undefined }),
          diagonal: fc.boolean(),
          active: fc.boolean(),
          logCondition: fc.integer({ min: 0, max: 8 }),
          salt: fc.integer({ min: 0, max: 1000 }),
          seed: fc.nat(),
          nanRate: fc.constantFrom(0, 0, 0.2),
          sigma0: fc.constantFrom(1e-3, 0.5, 3, 100),
          bounded: fc.boolean(),
        }),
        (o) => {
          const f = rotatedEllipsoid(o.n, o.logCondition, o.salt);
          const es = new CMAES({
            x0: new Float64Array(o.n).fill(0.5),
            sigma0: o.sigma0,
            seed: o.seed,
            populationSize: o.populationSize,
            diagonal: o.diagonal,
            active: o.active,
            lower: o.bounded ? -1 : undefined,
            upper: o.bounded ? 2 : undefined,
          });
          let draw = o.salt;
          for (let g = 0; g < 40; g++) {
            const xs = es.ask();
            const fitness = xs.map((x) => {
              draw = (draw * 1103515245 + 12345) % 2147483648;
              return draw / 2147483648 < o.nanRate ? Number.NaN : f(x);
            });
            if (fitness.every(Number.isNaN)) fitness[0] = 1;
            es.tell(xs, fitness);
            const { symmetric, min } = symmetricPositiveDefinite(es.covarianceMatrix(), o.n);
            expect(symmetric).toBe(true);
            expect(min).toBeGreaterThan(0);
            expect(Number.isFinite(es.sigma) && es.sigma > 0).toBe(true);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('the covariance models agree on a diagonal update', () => {
    const n = 3;
    const full = new FullCovariance(n);
    const diagonal = new DiagonalCovariance(n);
    const p = new Float64Array([0.5, -1, 2]);
    const ys = new Float64Array([1, 0, 0, 0, 2, 0, 0, 0, 3]);
    const coefficients = new Float64Array([0.1, 0.2, -0.01]);
    full.update(0.9, 0.05, p, ys, coefficients);
    diagonal.update(0.9, 0.05, p, ys, coefficients);
    const c = full.matrix();
    expect(Array.from(diagonal.variances())).toEqual([0, 4, 8].map((k) => c[k]));
    // Off-diagonal: the rank-one term only.
    expect(c[1]).toBeCloseTo(0.05 * 0.5 * -1, 15);
    const v = Array.from(diagonal.variances());
    expect(diagonal.condition()).toBeCloseTo(Math.max(...v) / Math.min(...v), 12);
  });

  it('sample and whiten are inverse: ‖whiten(sample(z))‖ = ‖z‖', () => {
    const es = new CMAES({ x0: [1, 2, 3, 4], sigma0: 1, seed: 5 });
    const f = rotatedEllipsoid(4, 4, 3);
    for (let g = 0; g < 30; g++) {
      const xs = es.ask();
      es.tell(xs, xs.map(f));
    }
    const model = (es as unknown as { model: FullCovariance }).model;
    const z = new Float64Array([0.3, -1.2, 2, 0.7]);
    const y = new Float64Array(4);
    const back = new Float64Array(4);
    model.sample(z, 0, y, 0);
    model.whiten(y, 0, back, 0);
    for (let i = 0; i < 4; i++) expect(back[i]).toBeCloseTo(z[i]!, 10);
  });
});
