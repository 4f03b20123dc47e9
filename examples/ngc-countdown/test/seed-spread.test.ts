import { describe, expect, it } from 'vitest';
import type { EvalCell, ExampleOutcome } from '../src/eval-cells';
import { seedSection, seedSpreads } from '../src/seed-spread';
import { runHistory as run } from './run-history';

/** 10 outcomes of which the first `correct` are right. */
function outcomes(correct: number): ExampleOutcome[] {
  return Array.from({ length: 10 }, (_, i) => ({
    correct: i < correct,
    peak: 1,
    completionLength: 1,
  }));
}

describe('seedSpreads', () => {
  const runs = [
    run('s2', { seed: 2 }),
    run('s0', { seed: 0 }),
    run('s1', { seed: 1 }),
    // Another recipe (a seed of its own, alone) and the full-cache run: no spread.
    run('w5', { seed: 1, window: 5 }),
    run('no-evict', { variant: 'no-evict', seed: 1 }),
  ];
  const cells: EvalCell[] = [
    { model: 's0', method: 'ngc', rate: 0.5, outcomes: outcomes(4) },
    { model: 's1', method: 'ngc', rate: 0.5, outcomes: outcomes(6) },
    { model: 's2', method: 'ngc', rate: 0.5, outcomes: outcomes(5) },
    { model: 'w5', method: 'ngc', rate: 0.5, outcomes: outcomes(9) },
    { model: 'no-evict', method: 'h2o', rate: 0.5, outcomes: outcomes(1) },
    // One seed evaluated at 0.2: no spread there.
    { model: 's0', method: 'ngc', rate: 0.2, outcomes: outcomes(8) },
  ];

  it("groups a recipe's seeds in seed order, with mean and range per rate", () => {
    expect(seedSpreads(runs, cells)).toEqual([
      {
        rate: 0.5,
        labels: ['s0', 's1', 's2'],
        seeds: [0, 1, 2],
        accuracies: [0.4, 0.6, 0.5],
        mean: 0.5,
        min: 0.4,
        max: 0.6,
      },
    ]);
  });

  it('writes one row per recipe and rate', () => {
    const lines = seedSection(seedSpreads(runs, cells));
    expect(lines).toContain(
      '| s0 (0), s1 (1), s2 (2) | 0.5 | 40.0%, 60.0%, 50.0% | 50.0% | 40.0%–60.0% |',
    );
    expect(seedSection([])).toEqual([]);
  });
});
