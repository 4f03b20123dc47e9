import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  type EvalCell,
  type EvalCells,
  type ExampleOutcome,
  readEvalCells,
} from '../src/eval-cells';
import { ngcReport } from '../src/report-content';
import { runHistory as run } from './run-history';

/** `n` outcomes of which `correct` are right, each with the given peak. */
function outcomes(n: number, correct: number, peak: number): ExampleOutcome[] {
  return Array.from({ length: n }, (_, i) => ({
    correct: i < correct,
    peak,
    completionLength: 10,
  }));
}

describe('ngcReport', () => {
  const cells: EvalCell[] = [
    { model: 'no-evict', method: 'full', rate: 0, outcomes: outcomes(10, 8, 100) },
    { model: 'ngc', method: 'ngc', rate: 0.5, outcomes: outcomes(10, 4, 40) },
    { model: 'token-only', method: 'ngc', rate: 0.5, outcomes: outcomes(10, 2, 40) },
    { model: 'dropout', method: 'ngc', rate: 0.5, outcomes: outcomes(10, 2, 50) },
    { model: 'ngc-w5', method: 'ngc', rate: 0.5, outcomes: outcomes(10, 9, 40) },
  ];
  const results: EvalCells = {
    settings: { examples: 10, evalSeed: 0, cadence: 16, window: 5 },
    cells,
  };
  const runs = [
    run('no-evict', { variant: 'no-evict' }),
    run('ngc', {}),
    run('token-only', { variant: 'token-only' }),
    run('dropout', { variant: 'dropout' }),
    run('ngc-w5', { window: 5 }),
  ];

  it('orders only the runs that differ from an ablation by the variant, ties marked', () => {
    const { markdown } = ngcReport(results, runs, 0.5);
    expect(markdown).toContain('): token-only 20.0% = dropout 20.0% < ngc 40.0%.');
    expect(markdown).toContain('| ngc-w5 | ngc | 90.0% |');
    expect(markdown).toContain('| ngc | ngc | 40.0% | 15.5% | 50.0% | 2.50× | 40.0 | 10.0 |');
  });

  it('plots the NGC-family models of the plotted runs only, every heuristic always', () => {
    const all = ngcReport(results, runs, 0.5).figures['accuracy-vs-peak.svg']!;
    const some = ngcReport(results, runs, 0.5, ['no-evict', 'ngc']).figures[
      'accuracy-vs-peak.svg'
    ]!;
    expect(all).toContain('ngc-w5');
    expect(some).not.toContain('ngc-w5');
    expect(some).not.toContain('token-only');
    expect(some).toContain('ngc (NGC');
  });

  it("lists each run's seed and starting point", () => {
    const continued = run('ngc-cont', { seed: 1, init: 'runs/ngc' });
    const { markdown } = ngcReport(results, [...runs, continued], 0.5);
    expect(markdown).toMatch(/\| ngc \| ngc \|.* \| 0 \| task model \|\n/);
    expect(markdown).toMatch(/\| ngc-cont \| ngc \|.* \| 1 \| run `runs\/ngc` \|\n/);
  });

  it('orders every NGC-family model when no ablation run is given', () => {
    const { markdown } = ngcReport(results, [runs[1]!, runs[4]!], 0.5, []);
    expect(markdown).toContain('): token-only 20.0% = dropout 20.0% < ngc 40.0% < ngc-w5 90.0%.');
  });
});

describe('the committed evaluation', () => {
  it('reads as the evaluation the report is made from (lethe-ngc-eval v1)', async () => {
    const path = fileURLToPath(new URL('../results/ngc-eval.json', import.meta.url));
    const { settings, cells } = await readEvalCells(path);
    expect(settings).toMatchObject({ examples: 256, evalSeed: 0, cadence: 16, window: 5 });
    expect(cells.length).toBeGreaterThan(0);
    for (const cell of cells) expect(cell.outcomes).toHaveLength(256);
    await expect(
      readEvalCells(fileURLToPath(new URL('../package.json', import.meta.url))),
    ).rejects.toThrow(/lethe-ngc-eval v1/);
  });
});
