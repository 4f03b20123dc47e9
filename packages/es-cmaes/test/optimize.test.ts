import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { optimize, type Progress, rastrigin, rosenbrock, sphere } from '../src/index';

describe('optimize(f, options)', () => {
  it('minimises Rosenbrock in 10-D and reports progress after every generation', () => {
    const seen: Progress[] = [];
    const result = optimize(rosenbrock, {
      x0: new Float64Array(10).fill(3),
      sigma0: 2,
      seed: 2,
      stopping: { ftarget: 1e-10 },
      onProgress: (p) => {
        seen.push(p);
      },
    });
    expect(result.f).toBeLessThanOrEqual(1e-10);
    for (const v of result.x) expect(v).toBeCloseTo(1, 4);
    expect(result.stopReasons).toEqual(['ftarget']);
    expect(result.runs).toHaveLength(1);
    expect(result.runs[0]!.stopReasons).toContain('ftarget');
    expect(seen).toHaveLength(result.iterations);
    expect(seen.map((p) => p.iterations)).toEqual(seen.map((_, i) => i + 1));
    expect(seen.at(-1)!.evaluations).toBe(result.evaluations);
    for (let i = 1; i < seen.length; i++)
      expect(seen[i]!.bestF).toBeLessThanOrEqual(seen[i - 1]!.bestF);
    expect(seen[0]!.populationSize).toBe(10);
  });

  it('stops when the callback returns false, and resumes from progress.state() bit-identically', () => {
    const options = {
      x0: [3, 3, 3, 3],
      sigma0: 2,
      seed: 8,
      lower: -5,
      upper: 5,
      restarts: { strategy: 'bipop' as const },
      maxEvaluations: 4000,
    };
    const whole = optimize(rastrigin, options);
    let saved: ReturnType<Progress['state']> | undefined;
    const first = optimize(rastrigin, {
      ...options,
      onProgress: (p) => {
        if (p.iterations === 50) {
          saved = JSON.parse(JSON.stringify(p.state()));
          return false;
        }
        return true;
      },
    });
    expect(first.stopReasons).toEqual(['callback']);
    expect(first.iterations).toBe(50);
    const rest = optimize(rastrigin, { ...options, resume: saved });
    expect(rest.f).toBe(whole.f);
    expect(rest.x).toEqual(whole.x);
    expect(rest.evaluations).toBe(whole.evaluations);
    expect(JSON.stringify(rest.state)).toBe(JSON.stringify(whole.state));
  });

  it('evaluates f only inside the bounds and finds an optimum on the boundary', () => {
    let outside = 0;
    const shifted = (x: Float64Array): number => {
      for (const v of x) if (v < 0 || v > 4) outside++;
      return sphere(x.map((v) => v + 1)); // optimum at −1, outside: the box optimum is 0
    };
    const result = optimize(shifted, {
      x0: [2, 2, 2, 2, 2],
      sigma0: 1,
      lower: 0,
      upper: 4,
      seed: 1,
      stopping: { tolFun: 1e-14 },
    });
    expect(outside).toBe(0);
    for (const v of result.x) expect(v).toBeLessThan(1e-6);
    expect(result.f - 5).toBeLessThan(1e-5);
  });

  it('passes a fresh copy to f (f may modify it) and ranks NaN results last', () => {
    let calls = 0;
    const result = optimize(
      (x) => {
        calls++;
        const v = sphere(x);
        x.fill(Number.NaN);
        return calls % 7 === 0 ? Number.NaN : v;
      },
      { x0: [1, -1, 2], sigma0: 1, seed: 3, stopping: { ftarget: 1e-8 } },
    );
    expect(result.f).toBeLessThanOrEqual(1e-8);
    expect(result.x.every(Number.isFinite)).toBe(true);
  });

  it('reports bad input with coded errors', () => {
    expectLetheError(
      () => optimize(42 as unknown as () => number, { x0: [0], sigma0: 1 }),
      'E_ARG',
      'f',
    );
    expectLetheError(() => optimize(() => Number.NaN, { x0: [0], sigma0: 1 }), 'E_ARG', 'fitness');
    expectLetheError(
      () => optimize(() => 'bad' as unknown as number, { x0: [0], sigma0: 1 }),
      'E_ARG',
      'fitness[0]',
    );
  });
});
