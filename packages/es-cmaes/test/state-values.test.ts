import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CMAES,
  CMAES_STATE_FORMAT_V2,
  type CMAESOptions,
  type CMAESState,
  RESTART_STATE_FORMAT_V2,
  RestartCMAES,
  type RestartState,
  rastrigin,
} from '../src/index';

type Json = Record<string, unknown>;
type Path = readonly (string | number)[];

/** One numeric field of a state, a value it never holds, and the field a refusal names. */
interface Corruption {
  readonly path: Path;
  readonly bad: unknown;
  /** The refusal's argument: the field, or the whole array for a check of the whole array. */
  readonly named: string;
}

function fieldName(path: Path): string {
  return path.reduce<string>(
    (s, p) => (typeof p === 'number' ? `${s}[${p}]` : `${s}.${p}`),
    'state',
  );
}

function at(state: unknown, path: Path): unknown {
  return path.reduce<unknown>((o, p) => (o as Json)[p as string], state);
}

function corrupt<T>(state: T, { path, bad }: Corruption): T {
  const copy = JSON.parse(JSON.stringify(state)) as Json;
  (at(copy, path.slice(0, -1)) as Json)[path.at(-1) as string] = bad;
  return copy as T;
}

const NON_FINITE = ['NaN', 'Infinity', '-Infinity'];

function scalar(path: Path, bad: readonly unknown[], named = fieldName(path)): Corruption[] {
  return bad.map((b) => ({ path, bad: b, named }));
}

function entries(state: unknown, path: Path, bad: readonly unknown[], whole = false): Corruption[] {
  const values = at(state, path) as unknown[] | null;
  return (values ?? []).flatMap((_, i) =>
    scalar([...path, i], bad, whole ? fieldName(path) : fieldName([...path, i])),
  );
}

/** Every corruption of one numeric field of `s` that {@link CMAES.fromState} must refuse. */
function cmaesCorruptions(s: CMAESState): Corruption[] {
  const n = s.config.dimension;
  const list: Corruption[] = [
    ...scalar(['sigma'], [-1, 0, ...NON_FINITE, 1e33]),
    ...entries(s, ['mean'], [...NON_FINITE, 1e33, -1e300]),
    ...entries(s, ['ps'], NON_FINITE),
    ...entries(s, ['pc'], NON_FINITE),
    ...scalar(['generation'], [-1, 0.5, 'NaN']),
    ...scalar(['evaluations'], [-1, s.evaluations + 1, 'Infinity']),
    ...scalar(['rng', 'counter'], [-1, 0.5]),
    ...scalar(['config', 'sigma0'], [-1, 0, ...NON_FINITE, 1e33]),
    ...scalar(['config', 'cm'], [0, 2, 'NaN']),
    ...scalar(['config', 'maxResamples'], [-1, 1.5, 'NaN']),
    ...scalar(['config', 'stopping', 'tolFun'], [-1, 'NaN']),
    ...scalar(['config', 'stopping', 'maxIterations'], [-1, 2.5, 'NaN']),
    ...scalar(['config', 'stopping', 'ftarget'], ['NaN']),
    ...entries(s, ['termination', 'bestHistory'], ['NaN']),
    ...entries(s, ['pendingZ'], NON_FINITE),
  ];
  if (s.covariance.kind === 'diagonal') {
    list.push(...entries(s, ['covariance', 'c'], [...NON_FINITE, 0, -1]));
  } else {
    for (let k = 0; k < n * n; k++) {
      const diagonal = k % (n + 1) === 0;
      list.push(...scalar(['covariance', 'c', k], diagonal ? [...NON_FINITE, 0, -1] : NON_FINITE));
      if (!diagonal) list.push(...scalar(['covariance', 'c', k], [12345], 'state.covariance.c'));
    }
    list.push(...entries(s, ['covariance', 'eigenvectors'], NON_FINITE));
    list.push(...entries(s, ['covariance', 'eigenvectors'], [5], true));
    list.push(...entries(s, ['covariance', 'axisLengths'], [...NON_FINITE, 0, -1]));
    list.push(...scalar(['covariance', 'eigenGeneration'], [-1, s.generation + 1]));
  }
  if (s.best !== null) {
    list.push(...scalar(['best', 'f'], ['NaN']));
    list.push(...entries(s, ['best', 'x'], NON_FINITE));
    list.push(...scalar(['best', 'evaluation'], [0, s.evaluations + 1]));
  }
  const { lower, upper } = s.config;
  if (lower !== null && upper !== null) {
    list.push(...entries(s, ['config', 'lower'], ['NaN', 1e33], true));
    if (s.best !== null) {
      s.best.x.forEach((_, i) => {
        list.push(...scalar(['best', 'x', i], [(upper[i] as number) + 1], 'state.best.x'));
      });
    }
  }
  return list;
}

/** A real run's state: `generations` tells, then (when `pending`) an ask. */
function runState(options: CMAESOptions, generations: number, pending: boolean): CMAESState {
  const es = new CMAES(options);
  for (let g = 0; g < generations; g++) {
    const xs = es.ask();
    es.tell(xs, xs.map(rastrigin));
  }
  if (pending) es.ask();
  return JSON.parse(JSON.stringify(es.state())) as CMAESState;
}

const runOptions = fc.record({
  seed: fc.nat(),
  n: fc.integer({ min: 1, max: 5 }),
  diagonal: fc.boolean(),
  bounds: fc.constantFrom('none', 'mirror', 'resample'),
  generations: fc.integer({ min: 0, max: 12 }),
  pending: fc.boolean(),
});

function options(o: { seed: number; n: number; diagonal: boolean; bounds: string }): CMAESOptions {
  const bounded =
    o.bounds === 'none'
      ? {}
      : { lower: -1, upper: 4, boundHandling: o.bounds as 'mirror' | 'resample' };
  return {
    x0: new Float64Array(o.n).fill(2),
    sigma0: 1,
    seed: o.seed,
    diagonal: o.diagonal,
    ...bounded,
  };
}

describe('fromState checks values, not only shapes', () => {
  it('accepts the state of any real run, and refuses any one numeric field made bad (property)', () => {
    fc.assert(
      fc.property(runOptions, fc.nat(), (o, pick) => {
        const state = runState(options(o), o.generations, o.pending);
        expect(JSON.stringify(CMAES.fromState(state).state())).toBe(JSON.stringify(state));
        const corruptions = cmaesCorruptions(state);
        const c = corruptions[pick % corruptions.length]!;
        expectLetheError(() => CMAES.fromState(corrupt(state, c)), 'E_FORMAT', c.named);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses every listed corruption of one state (exhaustive, full and separable)', () => {
    for (const diagonal of [false, true]) {
      const state = runState(options({ seed: 3, n: 3, diagonal, bounds: 'resample' }), 7, true);
      for (const c of cmaesCorruptions(state)) {
        expectLetheError(() => CMAES.fromState(corrupt(state, c)), 'E_FORMAT', c.named);
      }
    }
  });

  it('RestartCMAES.fromState accepts real states and refuses bad values (property)', () => {
    fc.assert(
      fc.property(
        fc.nat(),
        fc.constantFrom('ipop', 'bipop'),
        fc.integer({ min: 0, max: 150 }),
        fc.nat(),
        (seed, strategy, tells, pick) => {
          const es = new RestartCMAES({
            x0: [1, 1],
            sigma0: 1,
            seed,
            lower: -3,
            upper: 3,
            restarts: { strategy, maxRestarts: 3 },
            stopping: { ftarget: -1, tolFun: 1e-3, tolX: 1e-3 },
          });
          for (let g = 0; g < tells && !es.stopped; g++) {
            const xs = es.ask();
            es.tell(xs, xs.map(rastrigin));
          }
          const state = JSON.parse(JSON.stringify(es.state())) as RestartState;
          expect(JSON.stringify(RestartCMAES.fromState(state).state())).toBe(JSON.stringify(state));
          const counters = [
            'largeRuns',
            'budgetLarge',
            'budgetSmall',
            'lastLargeEvaluations',
            'evaluationsBefore',
            'iterationsBefore',
          ].flatMap((key) => {
            const v = state[key as keyof RestartState] as number;
            return scalar([key], [-1, v + 1]);
          });
          const corruptions: Corruption[] = [
            ...scalar(['populationFactor'], [1, 0.5, ...NON_FINITE]),
            ...scalar(['maxEvaluations'], [0, 1.5, 'NaN', '-Infinity']),
            ...scalar(['maxRestarts'], [-1, 0.5]),
            ...entries(state, ['x0'], [...NON_FINITE, 1e33]),
            ...scalar(['stopping', 'tolFun'], [-1, 'NaN']),
            ...scalar(['stopping', 'ftarget'], ['NaN']),
            ...scalar(['base', 'sigma0'], [-1, 0, 'NaN', 1e33]),
            ...counters,
            ...state.runs.flatMap((_, i) => [
              ...scalar(['runs', i, 'sigma0'], [-1, 0, ...NON_FINITE]),
              ...scalar(['runs', i, 'populationSize'], [1, 2.5]),
              ...scalar(['runs', i, 'evaluations'], [-1, 0.5]),
            ]),
            ...(state.best === null ? [] : scalar(['best', 'f'], ['NaN'])),
            // The current run is checked as CMAES.fromState checks it, under its own names.
            ...cmaesCorruptions(state.current).map((c) => ({ ...c, path: ['current', ...c.path] })),
          ];
          const c = corruptions[pick % corruptions.length]!;
          expectLetheError(() => RestartCMAES.fromState(corrupt(state, c)), 'E_FORMAT', c.named);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a run that diverges beyond ±1e32 can neither ask again nor be resumed', () => {
    // f = x₁ has no minimum: σ grows every generation and the mean runs off.
    const es = new CMAES({ x0: [0, 0], sigma0: 1e31, seed: 1, stopping: { tolUpSigma: Infinity } });
    let error: unknown;
    for (let g = 0; g < 200 && error === undefined; g++) {
      try {
        const xs = es.ask();
        es.tell(
          xs,
          xs.map((x) => x[0]!),
        );
      } catch (e) {
        error = e;
      }
    }
    expectLetheError(() => {
      throw error;
    }, 'E_STATE');
    const state = JSON.parse(JSON.stringify(es.state())) as CMAESState;
    expect(() => CMAES.fromState(state)).toThrow(/E_FORMAT/);
  });

  it('the constructor refuses coordinates and σ0 beyond ±1e32', () => {
    expectLetheError(() => new CMAES({ x0: [0, 1e33], sigma0: 1 }), 'E_ARG', 'x0');
    expectLetheError(() => new CMAES({ x0: [0], sigma0: 1e33 }), 'E_ARG', 'sigma0');
    expectLetheError(() => new CMAES({ x0: [0], sigma0: 1, lower: -1e33 }), 'E_ARG', 'lower');
    expectLetheError(() => new CMAES({ x0: [0], sigma0: 1, upper: 1e33 }), 'E_ARG', 'upper');
  });
});

describe('version-2 states', () => {
  it('continue bit-identically (they always mirrored)', () => {
    const es = new CMAES({ x0: [1, 2, 3], sigma0: 1, seed: 4, lower: 0, upper: 3.5 });
    for (let g = 0; g < 9; g++) {
      const xs = es.ask();
      es.tell(xs, xs.map(rastrigin));
    }
    const v3 = JSON.parse(JSON.stringify(es.state())) as CMAESState;
    const v2 = JSON.parse(JSON.stringify(v3)) as Json & { config: Json };
    v2.format = CMAES_STATE_FORMAT_V2;
    delete v2.config.boundHandling;
    delete v2.config.maxResamples;
    const a = CMAES.fromState(v3);
    const b = CMAES.fromState(v2 as unknown as CMAESState);
    expect(b.config.boundHandling).toBe('mirror');
    for (let g = 0; g < 5; g++) {
      const xa = a.ask();
      const xb = b.ask();
      expect(xb).toEqual(xa);
      a.tell(xa, xa.map(rastrigin));
      b.tell(xb, xb.map(rastrigin));
    }
    expect({ ...b.state(), format: 'x' }).toEqual({ ...a.state(), format: 'x' });
  });

  it('restart states of version 2 are read too', () => {
    const es = new RestartCMAES({
      x0: [1, 1],
      sigma0: 1,
      seed: 2,
      lower: -3,
      upper: 3,
      restarts: { strategy: 'bipop' },
      stopping: { tolFun: 1e-3 },
    });
    for (let g = 0; g < 60; g++) {
      const xs = es.ask();
      es.tell(xs, xs.map(rastrigin));
    }
    const v2 = JSON.parse(JSON.stringify(es.state())) as Json & {
      base: Json;
      current: Json & { config: Json };
    };
    v2.format = RESTART_STATE_FORMAT_V2;
    for (const config of [v2.base, v2.current.config]) {
      delete config.boundHandling;
      delete config.maxResamples;
    }
    v2.current.format = CMAES_STATE_FORMAT_V2;
    const resumed = RestartCMAES.fromState(v2 as unknown as RestartState);
    const xs = resumed.ask();
    expect(xs).toEqual(es.ask());
  });
});
