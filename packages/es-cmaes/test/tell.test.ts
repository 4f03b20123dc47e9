import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CMAES, sphere } from '../src/index';

type Action =
  | { kind: 'ask' }
  | { kind: 'tell' }
  | { kind: 'nanOne'; index: number }
  | { kind: 'allNaN' }
  | { kind: 'fewerFitness' }
  | { kind: 'moreSolutions' }
  | { kind: 'shortVector'; index: number }
  | { kind: 'nonFiniteEntry'; index: number }
  | { kind: 'notANumber'; index: number }
  | { kind: 'notAnArray' };

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.constant<Action>({ kind: 'ask' }),
  fc.constant<Action>({ kind: 'tell' }),
  fc.nat({ max: 5 }).map<Action>((index) => ({ kind: 'nanOne', index })),
  fc.constant<Action>({ kind: 'allNaN' }),
  fc.constant<Action>({ kind: 'fewerFitness' }),
  fc.constant<Action>({ kind: 'moreSolutions' }),
  fc.nat({ max: 5 }).map<Action>((index) => ({ kind: 'shortVector', index })),
  fc.nat({ max: 5 }).map<Action>((index) => ({ kind: 'nonFiniteEntry', index })),
  fc.nat({ max: 5 }).map<Action>((index) => ({ kind: 'notANumber', index })),
  fc.constant<Action>({ kind: 'notAnArray' }),
);

describe('tell rejects misuse with coded LetheErrors naming the argument', () => {
  it('fuzzed sequences of ask / tell: every bad call throws, changes nothing, and the run goes on', () => {
    fc.assert(
      fc.property(fc.array(action, { maxLength: 40 }), fc.nat(), (actions, seed) => {
        const es = new CMAES({ x0: [1, 2, 3], sigma0: 0.5, seed, populationSize: 6 });
        let asked: Float64Array[] | undefined;
        for (const a of actions) {
          if (a.kind === 'ask') {
            if (asked !== undefined) {
              const before = JSON.stringify(es.state());
              expectLetheError(() => es.ask(), 'E_STATE');
              expect(JSON.stringify(es.state())).toBe(before);
            } else {
              asked = es.ask();
            }
            continue;
          }
          const xs = asked ?? [[1, 2, 3]];
          const fitness = xs.map(sphere);
          const before = JSON.stringify(es.state());
          const expectError = (code: string, argument: string, s: unknown, f: unknown): void => {
            expectLetheError(() => es.tell(s as Float64Array[], f as number[]), code, argument);
            expect(JSON.stringify(es.state())).toBe(before);
          };
          if (asked === undefined) {
            // Tell without ask, or a second tell for one ask.
            expectError('E_STATE', 'solutions', xs, fitness);
            continue;
          }
          switch (a.kind) {
            case 'tell':
              es.tell(asked, fitness);
              asked = undefined;
              break;
            case 'nanOne': {
              fitness[a.index] = Number.NaN;
              es.tell(asked, fitness);
              asked = undefined;
              break;
            }
            case 'allNaN':
              expectError(
                'E_ARG',
                'fitness',
                asked,
                fitness.map(() => Number.NaN),
              );
              break;
            case 'fewerFitness':
              expectError('E_SHAPE', 'fitness', asked, fitness.slice(1));
              break;
            case 'moreSolutions':
              expectError('E_SHAPE', 'solutions', [...asked, asked[0]], [...fitness, 1]);
              break;
            case 'shortVector': {
              const bad = asked.slice();
              bad[a.index] = bad[a.index]!.slice(1);
              expectError('E_SHAPE', `solutions[${a.index}]`, bad, fitness);
              break;
            }
            case 'nonFiniteEntry': {
              const bad = asked.slice();
              bad[a.index] = Float64Array.from(bad[a.index]!);
              bad[a.index]![1] = Number.POSITIVE_INFINITY;
              expectError('E_ARG', `solutions[${a.index}]`, bad, fitness);
              break;
            }
            case 'notANumber': {
              const bad: unknown[] = fitness.slice();
              bad[a.index] = 'x';
              expectError('E_ARG', `fitness[${a.index}]`, asked, bad);
              break;
            }
            case 'notAnArray':
              expectError('E_ARG', 'solutions', 'nope', fitness);
              break;
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('names the state errors: tell before ask, tell twice, ask twice', () => {
    const es = new CMAES({ x0: [0, 0], sigma0: 1 });
    expect(expectLetheError(() => es.tell([], []), 'E_STATE', 'solutions').message).toContain(
      'call ask() first',
    );
    const xs = es.ask();
    expectLetheError(() => es.ask(), 'E_STATE');
    es.tell(xs, xs.map(sphere));
    expect(
      expectLetheError(() => es.tell(xs, xs.map(sphere)), 'E_STATE', 'solutions').message,
    ).toContain('already told');
  });

  it('ranks a NaN evaluation last: the update is the one +Infinity would give', () => {
    const run = (bad: number): CMAES => {
      const es = new CMAES({ x0: [1, 1, 1, 1], sigma0: 1, seed: 3 });
      for (let g = 0; g < 8; g++) {
        const xs = es.ask();
        const f = xs.map(sphere);
        f[g % xs.length] = bad;
        es.tell(xs, f);
      }
      return es;
    };
    const withNaN = run(Number.NaN);
    const withInf = run(Number.POSITIVE_INFINITY);
    expect(withNaN.mean).toEqual(withInf.mean);
    expect(withNaN.sigma).toBe(withInf.sigma);
    expect(withNaN.covarianceMatrix()).toEqual(withInf.covarianceMatrix());
    expect(Number.isNaN(withNaN.best!.f)).toBe(false);
  });

  it('accepts solutions in any array-like form and injects solutions that differ from the asked ones', () => {
    const es = new CMAES({ x0: [5, 5], sigma0: 1, seed: 1, populationSize: 4 });
    const xs = es.ask();
    const solutions: ArrayLike<number>[] = xs.map((x) => Array.from(x));
    solutions[3] = [0, 0]; // the optimum, injected
    es.tell(solutions, solutions.map(sphere));
    expect(Array.from(es.best!.x)).toEqual([0, 0]);
    expect(es.best!.evaluation).toBe(4);
    // Its step is clipped to Mahalanobis length √n + 2n/(n+2) = 2.414…: the mean moves less
    // than the full way to the optimum.
    const m = es.mean;
    expect(Math.hypot(m[0]! - 5, m[1]! - 5)).toBeLessThan(5 * Math.SQRT2);
  });

  it('rejects injected solutions outside the bounds', () => {
    const es = new CMAES({ x0: [0.5, 0.5], sigma0: 0.2, seed: 1, lower: 0, upper: 1 });
    const xs = es.ask();
    const bad = xs.slice();
    bad[2] = new Float64Array([2, 0.5]);
    expectLetheError(() => es.tell(bad, bad.map(sphere)), 'E_ARG', 'solutions[2]');
  });

  it('rejects bad options with coded errors naming them', () => {
    expectLetheError(() => new CMAES({ x0: [], sigma0: 1 }), 'E_SHAPE', 'x0');
    expectLetheError(() => new CMAES({ x0: [Number.NaN], sigma0: 1 }), 'E_ARG', 'x0');
    expectLetheError(() => new CMAES({ x0: [0], sigma0: 0 }), 'E_ARG', 'sigma0');
    expectLetheError(
      () => new CMAES({ x0: [0], sigma0: Number.POSITIVE_INFINITY }),
      'E_ARG',
      'sigma0',
    );
    expectLetheError(
      () => new CMAES({ x0: [0], sigma0: 1, populationSize: 1 }),
      'E_ARG',
      'populationSize',
    );
    expectLetheError(() => new CMAES({ x0: [0], sigma0: 1, cm: 2 }), 'E_ARG', 'cm');
    expectLetheError(() => new CMAES({ x0: [0], sigma0: 1, seed: -1 }), 'E_ARG', 'seed');
    expectLetheError(() => new CMAES({ x0: [2], sigma0: 1, upper: 1 }), 'E_ARG', 'x0');
    expectLetheError(() => new CMAES({ x0: [0, 0], sigma0: 1, lower: [0] }), 'E_SHAPE', 'lower');
    expectLetheError(
      () => new CMAES({ x0: [0], sigma0: 1, stopping: { tolFun: -1 } }),
      'E_ARG',
      'stopping.tolFun',
    );
    expectLetheError(
      () => new CMAES({ x0: [0], sigma0: 1, stopping: { maxIterations: 1.5 } }),
      'E_ARG',
      'stopping.maxIterations',
    );
    expectLetheError(
      () => new CMAES({ x0: [0], sigma0: 1, diagonal: 'yes' as unknown as boolean }),
      'E_ARG',
      'diagonal',
    );
    expectLetheError(
      () => new CMAES(undefined as unknown as { x0: number[]; sigma0: number }),
      'E_ARG',
      'options',
    );
  });
});
