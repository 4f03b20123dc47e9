import { describe, expect, it } from 'vitest';
import type { EvalCell, ExampleOutcome } from '../src/eval-cells';
import { interoceptionSection, interoceptionTests } from '../src/interoception-tests';
import { runHistory as run } from './run-history';

/** 20 outcomes, right on exactly the examples of `solved`, each holding `peak` entries. */
function outcomes(solved: readonly number[], peak: number): ExampleOutcome[] {
  return Array.from({ length: 20 }, (_, i) => ({
    correct: solved.includes(i),
    peak,
    completionLength: 10,
  }));
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

describe('interoceptionTests', () => {
  // The default curriculum ends at retention 0.5: ε = 0.5 is in training, 0.6 beyond it.
  const runs = [
    run('warm', { sftWarmupSteps: 100 }),
    run('intero', { sftWarmupSteps: 100, interoception: true, tagTokens: 'markup' }),
    // Tagged, but another warm-up: no untagged run shares its settings, so it is not tested.
    run('intero-cold', { interoception: true }),
    // Another variant untagged: never the partner of an NGC run.
    run('token-only', { sftWarmupSteps: 100, variant: 'token-only' }),
  ];
  const cells: EvalCell[] = [
    { model: 'warm', method: 'ngc', rate: 0.5, outcomes: outcomes(range(4), 100) },
    { model: 'intero', method: 'ngc', rate: 0.5, outcomes: outcomes(range(4), 110) },
    { model: 'warm', method: 'ngc', rate: 0.6, outcomes: outcomes([], 90) },
    { model: 'intero', method: 'ngc', rate: 0.6, outcomes: outcomes(range(9), 80) },
    { model: 'intero-cold', method: 'ngc', rate: 0.6, outcomes: outcomes(range(20), 80) },
    { model: 'token-only', method: 'ngc', rate: 0.6, outcomes: outcomes([], 80) },
    // The heuristics' cells are never paired.
    { model: 'warm', method: 'snapkv', rate: 0.6, outcomes: outcomes(range(20), 80) },
  ];

  it('pairs each tagged run with the untagged run of its settings, at every rate', () => {
    const tests = interoceptionTests(runs, cells);
    expect(tests.map((t) => [t.run, t.partner, t.rate])).toEqual([
      ['intero', 'warm', 0.5],
      ['intero', 'warm', 0.6],
    ]);
    const [tie, ahead] = tests as [(typeof tests)[0], (typeof tests)[0]];
    expect([tie.onlyRun, tie.onlyPartner, tie.pValue]).toEqual([0, 0, 1]);
    // 9 discordant pairs, all the tagged run's: p = 2 · (1/2)^9, alone at its rate.
    expect([ahead.onlyRun, ahead.onlyPartner]).toEqual([9, 0]);
    expect(ahead.adjustedP).toBeCloseTo(2 / 512, 12);
    expect([ahead.meanPeak, ahead.partnerMeanPeak]).toEqual([80, 90]);
  });

  it('writes a row per rate, better ones marked, rates past the curriculum named', () => {
    const lines = interoceptionSection(interoceptionTests(runs, cells));
    expect(lines).toContain(
      '| 0.5 | intero | 20.0% | 110.0 | warm | 20.0% | 100.0 | 0 | 0 | 1.00 | yes |',
    );
    expect(lines).toContain(
      '| 0.6 | intero | 45.0% ▲ | 80.0 | warm | 0.0% | 90.0 | 9 | 0 | 3.9e-3 | beyond |',
    );
    expect(interoceptionSection([])).toEqual([]);
  });
});
