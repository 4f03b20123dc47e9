import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CMAES,
  CMAES_STATE_FORMAT,
  type CMAESOptions,
  type CMAESState,
  rastrigin,
  rosenbrock,
} from '../src/index';

/** The bit patterns of the candidates (so that −0 ≠ 0 and NaN = NaN). */
function bits(xs: Float64Array[]): string {
  return xs.map((x) => Array.from(new BigUint64Array(x.slice().buffer)).join(',')).join(';');
}

function f(x: Float64Array): number {
  // Rosenbrock with an occasional NaN and +Infinity, to exercise their encoding.
  const v = rosenbrock(x);
  return x[0]! > 2.9 ? Number.NaN : x[1]! < -2 ? Number.POSITIVE_INFINITY : v;
}

/** Runs `generations` ask/tells, saving the state (as a JSON string) after `saveAt` tells. */
function runAndSave(
  options: CMAESOptions,
  generations: number,
  saveAt: number,
): { trace: string[]; saved: string; final: string } {
  const es = new CMAES(options);
  const trace: string[] = [];
  let saved = '';
  for (let g = 0; g < generations; g++) {
    if (g === saveAt) saved = JSON.stringify(es.state());
    const xs = es.ask();
    trace.push(bits(xs));
    es.tell(xs, xs.map(f));
  }
  return { trace, saved, final: JSON.stringify(es.state()) };
}

function resume(
  saved: string,
  generations: number,
  saveAt: number,
): { trace: string[]; final: string } {
  const es = CMAES.fromState(JSON.parse(saved) as CMAESState);
  const trace: string[] = [];
  for (let g = saveAt; g < generations; g++) {
    const xs = es.ask();
    trace.push(bits(xs));
    es.tell(xs, xs.map(f));
  }
  return { trace, final: JSON.stringify(es.state()) };
}

describe('plain-JSON state: save after any tell, resume bit-identically', () => {
  const variants: [string, CMAESOptions][] = [
    ['full', { x0: [3, 3, 3, 3, 3], sigma0: 2, seed: 11 }],
    ['separable', { x0: [3, 3, 3, 3, 3], sigma0: 2, seed: 12, diagonal: true }],
    [
      'bounded, λ = 7',
      {
        x0: [0, 0, 0, 0, 0],
        sigma0: 1,
        seed: 13,
        lower: -3,
        upper: [3, 3, 3, 3, 1],
        populationSize: 7,
      },
    ],
    [
      'bounded, resampling, λ = 9',
      {
        x0: [0, 0, 0, 0, 0],
        sigma0: 2,
        seed: 15,
        lower: -3,
        upper: [3, 3, 3, 3, 1],
        populationSize: 9,
        boundHandling: 'resample',
        maxResamples: 2,
      },
    ],
    [
      'n = 40 (lazy eigendecomposition)',
      { x0: new Float64Array(40).fill(1), sigma0: 0.5, seed: 14 },
    ],
  ];

  it.each(variants)(
    '%s: the same samples and the same final state as the uninterrupted run',
    (_, options) => {
      for (const saveAt of [0, 1, 7, 23]) {
        const whole = runAndSave(options, 30, saveAt);
        const resumed = resume(whole.saved, 30, saveAt);
        expect(resumed.trace).toEqual(whole.trace.slice(saveAt));
        expect(resumed.final).toBe(whole.final);
      }
    },
  );

  it('a state saved between ask and tell holds the pending population', () => {
    const options: CMAESOptions = { x0: [3, 3, 3], sigma0: 2, seed: 5 };
    const es = new CMAES(options);
    for (let g = 0; g < 5; g++) {
      const xs = es.ask();
      es.tell(xs, xs.map(f));
    }
    const xs = es.ask();
    const saved = JSON.stringify(es.state());
    es.tell(xs, xs.map(f));
    const next = bits(es.ask());
    const restored = CMAES.fromState(JSON.parse(saved));
    expect(restored.awaitingTell).toBe(true);
    expectLetheError(() => restored.ask(), 'E_STATE');
    // The caller kept xs; telling them to the restored run continues identically.
    restored.tell(xs, xs.map(f));
    expect(bits(restored.ask())).toBe(next);
  });

  it('round-trips through JSON for random runs (property): state → JSON → state is the identity', () => {
    fc.assert(
      fc.property(
        fc.nat(),
        fc.integer({ min: 1, max: 6 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 12 }),
        (seed, n, diagonal, generations) => {
          const es = new CMAES({ x0: new Float64Array(n).fill(2), sigma0: 1, seed, diagonal });
          for (let g = 0; g < generations; g++) {
            const xs = es.ask();
            es.tell(xs, xs.map(rastrigin));
          }
          const state = es.state();
          const text = JSON.stringify(state);
          expect(JSON.parse(text)).toEqual(state);
          expect(JSON.stringify(CMAES.fromState(JSON.parse(text)).state())).toBe(text);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('rejects malformed states with E_FORMAT naming the field', () => {
    const es = new CMAES({ x0: [1, 2], sigma0: 1, seed: 1 });
    const xs = es.ask();
    es.tell(xs, xs.map(rosenbrock));
    const good = es.state();
    const broken = (patch: (s: Record<string, unknown>) => void): CMAESState => {
      const s = JSON.parse(JSON.stringify(good)) as Record<string, unknown>;
      patch(s);
      return s as unknown as CMAESState;
    };
    expectLetheError(
      () => CMAES.fromState(broken((s) => (s.format = 'other/9'))),
      'E_FORMAT',
      'state.format',
    );
    // Version 1 drew its normals by Box–Muller: its generator state cannot continue the run.
    expect(CMAES_STATE_FORMAT).toBe('lethe-es-cmaes/3');
    expectLetheError(
      () => CMAES.fromState(broken((s) => (s.format = 'lethe-es-cmaes/1'))),
      'E_FORMAT',
      'state.format',
    );
    expectLetheError(
      () => CMAES.fromState(broken((s) => (s.mean = [1]))),
      'E_FORMAT',
      'state.mean',
    );
    expectLetheError(
      () => CMAES.fromState(broken((s) => (s.sigma = 'big'))),
      'E_FORMAT',
      'state.sigma',
    );
    expectLetheError(
      () => CMAES.fromState(broken((s) => ((s.rng as { counter: number }).counter = -2))),
      'E_FORMAT',
      'state.rng.counter',
    );
    expectLetheError(
      () => CMAES.fromState(broken((s) => ((s.covariance as { kind: string }).kind = 'diagonal'))),
      'E_FORMAT',
      'state.covariance.kind',
    );
    expectLetheError(
      () =>
        CMAES.fromState(
          broken((s) => ((s.config as { populationSize: number }).populationSize = 1)),
        ),
      'E_FORMAT',
      'state.config.populationSize',
    );
    expectLetheError(() => CMAES.fromState(null as unknown as CMAESState), 'E_FORMAT', 'state');
  });
});
