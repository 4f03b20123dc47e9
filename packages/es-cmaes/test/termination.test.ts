import { describe, expect, it } from 'vitest';
import { CMAES, DiagonalCovariance, FullCovariance, sphere } from '../src/index';
import { resolveStopping, type TerminationSnapshot, TerminationTracker } from '../src/termination';
import { runToStop } from './helpers';

const n = 4;
const lambda = 8;

function snapshot(over: Partial<TerminationSnapshot> = {}): TerminationSnapshot {
  return {
    generation: 1,
    evaluations: lambda,
    bestF: 1,
    sortedFitness: Float64Array.from({ length: lambda }, (_, i) => 1 + i),
    mean: new Float64Array(n).fill(1),
    sigma: 1,
    sigma0: 1,
    pc: new Float64Array(n).fill(0.1),
    model: new DiagonalCovariance(n),
    ...over,
  };
}

function tracker(stopping = {}): TerminationTracker {
  return new TerminationTracker(n, lambda, resolveStopping(stopping, n, lambda, 1));
}

describe('stopping criteria, each reported by name', () => {
  it('nothing holds for a healthy generation', () => {
    expect(tracker().check(snapshot())).toEqual([]);
  });

  it('ftarget, maxfevals, maxiter', () => {
    const t = tracker({ ftarget: 1, maxEvaluations: 8, maxIterations: 1 });
    expect(t.check(snapshot())).toEqual(['ftarget', 'maxfevals', 'maxiter']);
  });

  it('default maxiter is 100 + 150 (n + 3)² / √λ', () => {
    expect(resolveStopping({}, 10, 10, 1).maxIterations).toBe(
      Math.floor(100 + (150 * 169) / Math.sqrt(10)),
    );
  });

  it('tolfun and tolfunhist need 10 + ⌈30n/λ⌉ flat generations', () => {
    const t = tracker();
    expect(t.window).toBe(10 + Math.ceil((30 * n) / lambda));
    const flat = snapshot({ sortedFitness: new Float64Array(lambda).fill(2) });
    for (let g = 1; g < t.window; g++) expect(t.check({ ...flat, generation: g })).toEqual([]);
    expect(t.check({ ...flat, generation: t.window })).toEqual(['tolfun', 'tolfunhist']);
    // A spread in the current generation keeps tolfun off, not tolfunhist.
    const spread = snapshot({
      sortedFitness: Float64Array.from({ length: lambda }, (_, i) => 2 + i),
    });
    expect(t.check({ ...spread, generation: t.window + 1 })).toEqual(['tolfunhist']);
  });

  it('tolx: σ√c_ii and σ|p_c,i| below tolX in every coordinate', () => {
    const t = tracker({ tolX: 1e-3 });
    expect(t.check(snapshot({ sigma: 1e-4, pc: new Float64Array(n).fill(1) }))).toEqual(['tolx']);
    expect(t.check(snapshot({ sigma: 1e-4, pc: new Float64Array(n).fill(100) }))).toEqual([]);
  });

  it('tolupsigma: σ/σ₀ above tolUpSigma · max D', () => {
    expect(tracker({ tolUpSigma: 10 }).check(snapshot({ sigma: 11 }))).toEqual(['tolupsigma']);
  });

  it('conditioncov: cond(C) above conditionCov', () => {
    const model = new DiagonalCovariance(n);
    model.update(
      1,
      0,
      new Float64Array(n),
      new Float64Array([100, 0, 0, 0]),
      new Float64Array([1]),
    );
    expect(tracker({ conditionCov: 100 }).check(snapshot({ model }))).toEqual(['conditioncov']);
  });

  it('noeffectaxis: 0.1 σ along principal axis g mod n leaves m unchanged', () => {
    const model = new FullCovariance(n);
    const mean = new Float64Array(n).fill(1e20);
    expect(
      tracker({ noEffectCoord: false }).check(snapshot({ model, mean, pc: new Float64Array(n) })),
    ).toEqual(['noeffectaxis']);
    expect(
      tracker({ noEffectAxis: false, noEffectCoord: false }).check(snapshot({ model, mean })),
    ).toEqual([]);
  });

  it('noeffectcoord: 0.2 σ √c_ii leaves some m_i unchanged', () => {
    const mean = new Float64Array([1, 1, 1e20, 1]);
    expect(tracker().check(snapshot({ mean }))).toEqual(['noeffectcoord']);
  });

  it('stagnation: neither the best nor the median f improves over ≥ 120 + 30n/λ generations', () => {
    const t = tracker({ tolFunHist: 0, tolFun: 0 });
    let reasons: string[] = [];
    let g = 0;
    // Noisy, not improving: best and median alternate between two levels.
    while (reasons.length === 0 && g < 1000) {
      g++;
      const base = g % 2 === 0 ? 1 : 2;
      reasons = t.check(
        snapshot({
          generation: g,
          sortedFitness: Float64Array.from({ length: lambda }, (_, i) => base + i),
        }),
      );
    }
    expect(reasons).toEqual(['stagnation']);
    expect(g).toBe(t.stagnationMin);
    // A steadily improving run never stagnates.
    const u = tracker({ tolFunHist: 0, tolFun: 0 });
    for (let k = 1; k < 400; k++) {
      const r = u.check(
        snapshot({
          generation: k,
          sortedFitness: Float64Array.from({ length: lambda }, (_, i) => 1 / k + i),
        }),
      );
      expect(r).toEqual([]);
    }
  });
});

describe('stopping criteria on real runs', () => {
  it('a sphere run without a target ends by tolfun / tolfunhist near the optimum', () => {
    const es = new CMAES({ x0: [3, 3, 3, 3, 3], sigma0: 2, seed: 1 });
    runToStop(es, sphere);
    expect(es.stopReasons).toContain('tolfun');
    expect(es.best!.f).toBeLessThan(1e-11);
  });

  it('pure noise ends by stagnation', () => {
    let state = 1;
    const noise = (): number => {
      state = (state * 16807) % 2147483647;
      return state / 2147483647;
    };
    const es = new CMAES({ x0: [0, 0, 0], sigma0: 1, seed: 2 });
    runToStop(es, noise, 20_000);
    expect(es.stopReasons).toContain('stagnation');
  });

  it('a far-away optimum with tolerances off ends by noeffectaxis / noeffectcoord', () => {
    const c = 1e8;
    const shifted = (x: Float64Array): number => sphere(x.map((v) => v - c));
    const es = new CMAES({
      x0: [c + 1, c + 1, c + 1],
      sigma0: 1,
      seed: 3,
      stopping: { tolFun: 0, tolFunHist: 0, tolX: 0, stagnation: false },
    });
    runToStop(es, shifted, 5000);
    expect(es.stopReasons.some((r) => r === 'noeffectaxis' || r === 'noeffectcoord')).toBe(true);
  });

  it('a flat function makes σ grow (flat-fitness rule) and ends by tolfun', () => {
    const es = new CMAES({ x0: [0, 0], sigma0: 1, seed: 4 });
    runToStop(es, () => 7);
    expect(es.stopReasons).toContain('tolfun');
    expect(es.sigma).toBeGreaterThan(1);
  });

  it('maxfevals and maxiter end a run at the budget', () => {
    const a = new CMAES({
      x0: [3, 3],
      sigma0: 1,
      populationSize: 10,
      stopping: { maxEvaluations: 35 },
    });
    runToStop(a, sphere);
    expect(a.stopReasons).toEqual(['maxfevals']);
    expect(a.evaluations).toBe(40);
    const b = new CMAES({ x0: [3, 3], sigma0: 1, stopping: { maxIterations: 3 } });
    runToStop(b, sphere);
    expect(b.stopReasons).toEqual(['maxiter']);
    expect(b.generation).toBe(3);
  });
});
