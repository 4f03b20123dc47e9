import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  RestartCMAES,
  type RestartOptions,
  type RestartState,
  rastrigin,
  sphere,
} from '../src/index';

function drive(es: RestartCMAES, f: (x: Float64Array) => number, maxGenerations = 1e6): void {
  for (let g = 0; g < maxGenerations && !es.stopped; g++) {
    const xs = es.ask();
    es.tell(xs, xs.map(f));
  }
}

describe('IPOP and BIPOP restarts', () => {
  it('IPOP doubles λ at every restart and solves Rastrigin in 5-D', () => {
    const es = new RestartCMAES({
      x0: [3, 3, 3, 3, 3],
      sigma0: 2,
      lower: -5,
      upper: 5,
      seed: 1,
      restarts: { strategy: 'ipop' },
      stopping: { ftarget: 1e-8 },
    });
    drive(es, rastrigin);
    expect(es.stopReasons).toEqual(['ftarget']);
    expect(es.best!.f).toBeLessThanOrEqual(1e-8);
    const sizes = [...es.runs.map((r) => r.populationSize)];
    const lambda0 = es.runs[0]!.populationSize;
    sizes.forEach((s, k) => expect(s).toBe(lambda0 * 2 ** k));
    expect(es.runs.slice(1).every((r) => r.regime === 'large')).toBe(true);
    expect(es.runs.every((r) => r.stopReasons.length > 0)).toBe(true);
  });

  it('BIPOP interlaces large and small regimes by budget, and solves Rastrigin in 5-D', () => {
    const es = new RestartCMAES({
      x0: [3, 3, 3, 3, 3],
      sigma0: 2,
      lower: -5,
      upper: 5,
      seed: 2,
      restarts: { strategy: 'bipop', maxRestarts: 30 },
      stopping: { ftarget: 1e-8 },
    });
    drive(es, rastrigin);
    expect(es.best!.f).toBeLessThanOrEqual(1e-8);
    const runs = es.runs;
    expect(runs[0]!.regime).toBe('first');
    if (runs.length > 1) expect(runs[1]!.regime).toBe('large');
    const lambda0 = runs[0]!.populationSize;
    let large = 0;
    let small = 0;
    let largeRuns = 1;
    let lastLarge = runs[0]!.evaluations;
    for (const r of runs.slice(1)) {
      // The regime with the smaller budget so far runs next (first run: neither).
      expect(r.regime).toBe(small < large ? 'small' : 'large');
      if (r.regime === 'large') {
        expect(r.populationSize).toBe(lambda0 * 2 ** largeRuns);
        expect(r.sigma0).toBe(2);
        largeRuns++;
        large += r.evaluations;
        lastLarge = r.evaluations;
      } else {
        expect(r.populationSize).toBeGreaterThanOrEqual(lambda0);
        expect(r.populationSize).toBeLessThanOrEqual(lambda0 * 2 ** (largeRuns - 1));
        expect(r.sigma0).toBeLessThanOrEqual(2);
        expect(r.sigma0).toBeGreaterThanOrEqual(0.02);
        expect(r.evaluations).toBeLessThanOrEqual(Math.ceil(lastLarge / 2) + r.populationSize);
        small += r.evaluations;
      }
    }
  });

  it('stops for maxrestarts and for the total budget, counting evaluations over all runs', () => {
    const a = new RestartCMAES({
      x0: [1, 1],
      sigma0: 1,
      seed: 3,
      restarts: { strategy: 'ipop', maxRestarts: 2 },
    });
    drive(a, sphere);
    expect(a.stopReasons).toEqual(['maxrestarts']);
    expect(a.runs.length).toBe(3);
    expect(a.evaluations).toBe(a.runs.reduce((s, r) => s + r.evaluations, 0));
    const b = new RestartCMAES({
      x0: [1, 1, 1],
      sigma0: 1,
      seed: 3,
      restarts: { strategy: 'bipop' },
      maxEvaluations: 3000,
      lower: -5,
      upper: 5,
    });
    drive(b, rastrigin);
    expect(b.stopReasons).toContain('maxfevals');
    expect(b.evaluations).toBeGreaterThanOrEqual(3000);
    expect(b.evaluations).toBeLessThan(3000 + 200);
    expectLetheError(() => b.ask(), 'E_STATE');
  });

  it('BIPOP counts only its large-population restarts against maxRestarts (as pycma)', () => {
    const es = new RestartCMAES({
      x0: [3, 3, 3],
      sigma0: 2,
      lower: -5,
      upper: 5,
      seed: 8,
      restarts: { strategy: 'bipop', maxRestarts: 3 },
    });
    drive(es, rastrigin);
    expect(es.stopReasons).toEqual(['maxrestarts']);
    const regimes = es.runs.map((r) => r.regime);
    expect(regimes.filter((r) => r !== 'small')).toEqual(['first', 'large', 'large', 'large']);
    expect(regimes.at(-1)).toBe('large');
    expect(regimes.filter((r) => r === 'small').length).toBeGreaterThan(0);
  });

  it('restarts start uniformly in a finite box, else from x0', () => {
    const starts = (options: RestartOptions): Float64Array[] => {
      const es = new RestartCMAES(options);
      const means: Float64Array[] = [];
      while (!es.stopped) {
        if (es.current.generation === 0) means.push(es.current.mean);
        const xs = es.ask();
        es.tell(xs, xs.map(sphere));
      }
      expect(means.length).toBe(4);
      return means;
    };
    const restarts = { strategy: 'ipop', maxRestarts: 3 } as const;
    const boxed = starts({
      x0: [0.5, 15],
      sigma0: 0.1,
      seed: 4,
      lower: [0, 10],
      upper: [1, 20],
      restarts,
    });
    expect(Array.from(boxed[0]!)).toEqual([0.5, 15]);
    for (const m of boxed.slice(1)) {
      expect(m[0]).toBeGreaterThanOrEqual(0);
      expect(m[0]).toBeLessThanOrEqual(1);
      expect(m[1]).toBeGreaterThanOrEqual(10);
      expect(m[1]).toBeLessThanOrEqual(20);
      expect(Array.from(m)).not.toEqual([0.5, 15]);
    }
    const open = starts({ x0: [0.5, 15], sigma0: 0.1, seed: 4, lower: 0, restarts });
    for (const m of open) expect(Array.from(m)).toEqual([0.5, 15]);
    expectLetheError(
      () => new RestartCMAES({ x0: [0], sigma0: 1, restarts: { restartFrom: 'uniform' } }),
      'E_ARG',
      'restarts.restartFrom',
    );
  });

  it('without a restart policy it is exactly one CMAES run', () => {
    const es = new RestartCMAES({ x0: [2, 2], sigma0: 1, seed: 9 });
    drive(es, sphere);
    expect(es.runs.length).toBe(1);
    expect(es.stopReasons).toEqual(es.runs[0]!.stopReasons);
    expect(es.stopReasons).toContain('tolfun');
  });

  it('rejects bad restart options with coded errors', () => {
    const base: RestartOptions = { x0: [0], sigma0: 1 };
    expectLetheError(
      () => new RestartCMAES({ ...base, restarts: { strategy: 'lol' as 'ipop' } }),
      'E_ARG',
      'restarts.strategy',
    );
    expectLetheError(
      () => new RestartCMAES({ ...base, restarts: { maxRestarts: -1 } }),
      'E_ARG',
      'restarts.maxRestarts',
    );
    expectLetheError(
      () => new RestartCMAES({ ...base, restarts: { populationFactor: 1 } }),
      'E_ARG',
      'restarts.populationFactor',
    );
    expectLetheError(
      () => new RestartCMAES({ ...base, maxEvaluations: 0 }),
      'E_ARG',
      'maxEvaluations',
    );
  });

  it('its JSON state resumes bit-identically, across restarts', () => {
    const options: RestartOptions = {
      x0: [3, 3, 3],
      sigma0: 2,
      lower: -5,
      upper: 5,
      seed: 6,
      restarts: { strategy: 'bipop' },
      maxEvaluations: 6000,
    };
    const whole = new RestartCMAES(options);
    const saves = new Map<number, string>();
    const trace: string[] = [];
    for (let g = 0; !whole.stopped; g++) {
      if (g % 37 === 0) saves.set(g, JSON.stringify(whole.state()));
      const xs = whole.ask();
      trace.push(xs.map((x) => x.join(',')).join(';'));
      whole.tell(xs, xs.map(rastrigin));
    }
    expect(whole.runs.length).toBeGreaterThan(2);
    const final = JSON.stringify(whole.state());
    for (const [g, saved] of saves) {
      const es = RestartCMAES.fromState(JSON.parse(saved) as RestartState);
      const tail: string[] = [];
      while (!es.stopped) {
        const xs = es.ask();
        tail.push(xs.map((x) => x.join(',')).join(';'));
        es.tell(xs, xs.map(rastrigin));
      }
      expect(tail).toEqual(trace.slice(g));
      expect(JSON.stringify(es.state())).toBe(final);
    }
  });

  it('rejects malformed restart states', () => {
    const es = new RestartCMAES({ x0: [1], sigma0: 1 });
    const s = JSON.parse(JSON.stringify(es.state()));
    expectLetheError(
      () => RestartCMAES.fromState({ ...s, format: 'x' }),
      'E_FORMAT',
      'state.format',
    );
    expectLetheError(
      () => RestartCMAES.fromState({ ...s, format: 'lethe-es-cmaes/restarts/1' }),
      'E_FORMAT',
      'state.format',
    );
    expectLetheError(
      () => RestartCMAES.fromState({ ...s, strategy: 'y' }),
      'E_FORMAT',
      'state.strategy',
    );
    expectLetheError(
      () => RestartCMAES.fromState({ ...s, largeRuns: 0 }),
      'E_FORMAT',
      'state.largeRuns',
    );
    expectLetheError(
      () => RestartCMAES.fromState({ ...s, current: { ...s.current, mean: [] } }),
      'E_FORMAT',
      'state.mean',
    );
  });
});
