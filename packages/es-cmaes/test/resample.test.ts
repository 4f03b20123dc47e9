import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CMAES, type CMAESOptions, optimize, RestartCMAES, rastrigin, sphere } from '../src/index';

function firstPopulation(options: CMAESOptions): Float64Array[] {
  return new CMAES(options).ask();
}

function mean(values: readonly number[]): number {
  return values.reduce((s, v) => s + v, 0) / values.length;
}

describe("boundHandling: 'resample' (redraw out-of-box candidates, then clip)", () => {
  it('draws from the normal distribution truncated to the box, where mirroring folds it', () => {
    // m = 0.5, σ = 1, x ≥ 0: truncated mean 0.5 + φ(0.5)/Φ(0.5) = 1.0092; folded 0.8956.
    const options: CMAESOptions = {
      x0: [0.5],
      sigma0: 1,
      lower: 0,
      populationSize: 20000,
      seed: 3,
    };
    const resampled = firstPopulation({ ...options, boundHandling: 'resample' }).map((x) => x[0]!);
    const mirrored = firstPopulation(options).map((x) => x[0]!);
    expect(Math.min(...resampled)).toBeGreaterThanOrEqual(0);
    expect(Math.abs(mean(resampled) - 1.0092)).toBeLessThan(0.03);
    expect(Math.abs(mean(mirrored) - 0.8956)).toBeLessThan(0.03);
  });

  it('clips a candidate still outside after maxResamples redraws, and only then', () => {
    const options: CMAESOptions = {
      x0: [0],
      sigma0: 10,
      lower: -1,
      upper: 1,
      populationSize: 200,
      boundHandling: 'resample',
      seed: 5,
    };
    const onBound = (xs: Float64Array[]): number => xs.filter((x) => Math.abs(x[0]!) === 1).length;
    // P(inside) ≈ 0.08 per draw: without redraws most candidates are clipped onto ±1 …
    expect(onBound(firstPopulation({ ...options, maxResamples: 0 }))).toBeGreaterThan(150);
    // … with 100, a candidate is clipped with probability 0.92¹⁰¹ ≈ 2·10⁻⁴.
    expect(onBound(firstPopulation(options))).toBeLessThan(3);
    // Clipped candidates enter the update as injected solutions: the run goes on.
    const es = new CMAES({ ...options, maxResamples: 0 });
    for (let g = 0; g < 30; g++) {
      const xs = es.ask();
      es.tell(xs, xs.map(sphere));
    }
    expect(es.best!.f).toBeLessThan(1e-6);
  });

  it('a state saved between ask and tell restores the clipped candidates and their update', () => {
    const options: CMAESOptions = {
      x0: [0, 0.5],
      sigma0: 3,
      lower: -1,
      upper: 1,
      boundHandling: 'resample',
      maxResamples: 1,
      seed: 9,
    };
    const es = new CMAES(options);
    const xs = es.ask();
    expect(xs.some((x) => Math.abs(x[0]!) === 1 || Math.abs(x[1]!) === 1)).toBe(true);
    const saved = JSON.stringify(es.state());
    es.tell(xs, xs.map(sphere));
    const restored = CMAES.fromState(JSON.parse(saved));
    restored.tell(xs, xs.map(sphere));
    expect(restored.ask()).toEqual(es.ask());
    expect(restored.state()).toEqual(es.state());
  });

  it('keeps every candidate inside the box (property)', () => {
    fc.assert(
      fc.property(
        fc.nat(),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 3 }),
        (seed, n, maxResamples) => {
          const es = new CMAES({
            x0: new Float64Array(n).fill(0.9),
            sigma0: 0.7,
            lower: 0,
            upper: [1, 2, 1, 3].slice(0, n),
            boundHandling: 'resample',
            maxResamples,
            seed,
          });
          for (let g = 0; g < 8; g++) {
            const xs = es.ask();
            for (const x of xs) {
              x.forEach((v, i) => {
                expect(v).toBeGreaterThanOrEqual(0);
                expect(v).toBeLessThanOrEqual(i === 1 ? 2 : i === 3 ? 3 : 1);
              });
            }
            es.tell(xs, xs.map(rastrigin));
          }
        },
      ),
      { numRuns: 50 },
    );
  });

  it('pins coordinates with lower = upper without redrawing for them', () => {
    const options: CMAESOptions = {
      x0: [0.5, 2],
      sigma0: 0.01,
      lower: [0, 2],
      upper: [1, 2],
      boundHandling: 'resample',
      seed: 1,
    };
    const es = new CMAES(options);
    const counter = es.state().rng.counter;
    const xs = es.ask();
    for (const x of xs) expect(x[1]).toBe(2);
    // One batch of λ·n normals, no redraws (each would cost at least a block).
    const free = new CMAES({ ...options, lower: undefined, upper: undefined });
    free.ask();
    expect(es.state().rng.counter - counter).toBe(free.state().rng.counter - counter);
  });

  it('resamples in every restart and solves bounded Rastrigin in 5-D with IPOP', () => {
    const result = optimize(rastrigin, {
      x0: [3, 3, 3, 3, 3],
      sigma0: 2,
      lower: -5,
      upper: 5,
      seed: 1,
      boundHandling: 'resample',
      restarts: { strategy: 'ipop' },
      stopping: { ftarget: 1e-8 },
    });
    expect(result.stopReasons).toEqual(['ftarget']);
    const es = RestartCMAES.fromState(result.state);
    expect(es.current.config.boundHandling).toBe('resample');
  });

  it('rejects bad bound-handling options with coded errors', () => {
    const base: CMAESOptions = { x0: [0], sigma0: 1, lower: -1, upper: 1 };
    expectLetheError(
      () => new CMAES({ ...base, boundHandling: 'clip' as 'mirror' }),
      'E_ARG',
      'boundHandling',
    );
    expectLetheError(() => new CMAES({ ...base, maxResamples: -1 }), 'E_ARG', 'maxResamples');
    expectLetheError(() => new CMAES({ ...base, maxResamples: 1.5 }), 'E_ARG', 'maxResamples');
    expectLetheError(
      () => new CMAES({ ...base, maxResamples: Number.POSITIVE_INFINITY }),
      'E_ARG',
      'maxResamples',
    );
    expect(new CMAES(base).config.boundHandling).toBe('mirror');
    expect(new CMAES(base).config.maxResamples).toBe(100);
  });
});
