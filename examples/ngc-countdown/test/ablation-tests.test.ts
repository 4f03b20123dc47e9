import { describe, expect, it } from 'vitest';
import { ablationSection, ablationTests } from '../src/ablation-tests';
import type { EvalCell, ExampleOutcome } from '../src/eval-cells';
import { runHistory as run } from './run-history';

/** 20 outcomes, right on exactly the examples of `solved`. */
function outcomes(solved: readonly number[]): ExampleOutcome[] {
  return Array.from({ length: 20 }, (_, i) => ({
    correct: solved.includes(i),
    peak: 10,
    completionLength: 10,
  }));
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

describe('ablationTests', () => {
  const runs = [
    run('ngc', {}),
    run('token-only', { variant: 'token-only' }),
    run('kv-dropout', { variant: 'dropout' }),
    // An ablation of another recipe: no NGC run shares its settings, so it is not tested.
    run('token-only-w5', { variant: 'token-only', window: 5 }),
  ];
  const cells: EvalCell[] = [
    { model: 'ngc', method: 'ngc', rate: 0.5, outcomes: outcomes(range(10)) },
    { model: 'token-only', method: 'ngc', rate: 0.5, outcomes: outcomes([0, 1]) },
    { model: 'kv-dropout', method: 'ngc', rate: 0.5, outcomes: outcomes([...range(10), 10]) },
    { model: 'token-only-w5', method: 'ngc', rate: 0.5, outcomes: outcomes([]) },
    // Only the ablation ran at 0.2: nothing to pair there.
    { model: 'token-only', method: 'ngc', rate: 0.2, outcomes: outcomes([0]) },
  ];

  it('pairs each ablation with the NGC run of its settings, exact McNemar, Holm over a rate', () => {
    const tests = ablationTests(runs, cells);
    expect(tests.map((t) => [t.run, t.partner, t.rate])).toEqual([
      ['token-only', 'ngc', 0.5],
      ['kv-dropout', 'ngc', 0.5],
    ]);
    const [tokenOnly, dropout] = tests as [(typeof tests)[0], (typeof tests)[0]];
    // 8 discordant pairs, all NGC's: p = 2 · (1/2)^8; one pair the ablation's: p = 1.
    expect([tokenOnly.onlyRun, tokenOnly.onlyPartner]).toEqual([0, 8]);
    expect(tokenOnly.pValue).toBeCloseTo(2 / 256, 12);
    expect([dropout.onlyRun, dropout.onlyPartner, dropout.pValue]).toEqual([1, 0, 1]);
    // Holm over the two tests of ε = 0.5: the smaller p doubled, the larger kept.
    expect(tokenOnly.adjustedP).toBeCloseTo(4 / 256, 12);
    expect(dropout.adjustedP).toBe(1);
    expect([tokenOnly.accuracy, tokenOnly.partnerAccuracy]).toEqual([0.1, 0.5]);
  });

  it('writes a table row per test, worse ones marked', () => {
    const lines = ablationSection(ablationTests(runs, cells));
    expect(lines).toContain('| 0.5 | token-only | 10.0% ▼ | ngc | 50.0% | 0 | 8 | 0.02 |');
    expect(lines).toContain('| 0.5 | kv-dropout (dropout) | 55.0% | ngc | 50.0% | 1 | 0 | 1.00 |');
    expect(ablationSection([])).toEqual([]);
  });
});
