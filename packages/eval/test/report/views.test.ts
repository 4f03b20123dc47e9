import { describe, expect, it } from 'vitest';
import type { CellResult, SweepResults } from '../../src/harness/results';
import { compactTable, identicalNote } from '../../src/report/compact-table';
import { reportRows } from '../../src/report/rows';
import { scoreViews } from '../../src/report/views';
import { BUDGETS, fakeSweep, POLICIES } from './fixture';

/** The fake sweep plus `twin`, a copy of h2o, and `lookalike`: h2o's scores, other caches. */
function withTwins(): SweepResults {
  const sweep = fakeSweep();
  const copies = (policy: string, change: (cell: CellResult) => CellResult) =>
    sweep.cells
      .filter((cell) => cell.key.policy === 'h2o')
      .map((cell) => change({ ...cell, key: { ...cell.key, policy } }));
  return {
    ...sweep,
    cells: [
      ...sweep.cells,
      ...copies('twin', (cell) => cell),
      ...copies('lookalike', (cell) => ({
        ...cell,
        metrics: { ...cell.metrics, meanLive: { ...cell.metrics.meanLive, mean: 1 } },
      })),
    ],
  };
}

describe('scoreViews', () => {
  it('has one view per task and score, with slugs and every row scored', () => {
    const views = scoreViews(reportRows(fakeSweep()));
    expect(views.map((view) => [view.task, view.slug, view.metric.name])).toEqual([
      ['countdown', 'countdown', 'accuracy'],
      ['lm', 'lm', 'perplexity'],
    ]);
    expect(views[0]!.rows).toHaveLength(1 + POLICIES.length * BUDGETS.length);
    expect(views[0]!.identical).toEqual([]);
  });

  it('names policies with identical results together, not ones that only score alike', () => {
    const views = scoreViews(reportRows(withTwins()));
    for (const view of views) expect(view.identical).toEqual([['h2o', 'twin']]);
    expect(identicalNote(views[0]!)).toBe(
      'Identical results at every budget (to the precision shown): h2o = twin. ' +
        'The plots draw each group as one series.',
    );
  });

  it('gives slugs safe for ids, unique after slugging', () => {
    const sweep = fakeSweep();
    const renamed = (task: string, from: number) => ({
      ...sweep.cells[from]!,
      key: { ...sweep.cells[from]!.key, task },
    });
    const views = scoreViews(
      reportRows({ ...sweep, cells: [renamed('a b', 0), renamed('a/b', 1), renamed('<>', 2)] }),
    );
    expect(views.map((view) => view.slug)).toEqual(['a-b', 'a-b-2', 'task']);
  });
});

describe('compactTable', () => {
  it('has a row per policy, a column per budget ascending, and the full cache apart', () => {
    const [countdown] = scoreViews(reportRows(withTwins()));
    const table = compactTable(countdown!);
    expect(table.budgets).toEqual([...BUDGETS]);
    expect(table.rows.map((row) => row.label)).toEqual([
      'streaming-llm',
      'h2o (= twin)',
      'snapkv',
      'twin (= h2o)',
      'lookalike',
    ]);
    expect(table.full!.mean).toBeCloseTo((131 / 256) * 100, 12);
    // Realised budgets (peak / full peak) per column, e.g. 1152–1170 of 4480 at 25%.
    expect(table.realised[0]).toBe(
      `${((1152 / 4480) * 100).toFixed(1)}–${((1170 / 4480) * 100).toFixed(1)}%`,
    );
    // A compute policy or read selector keeps the whole cache: its rows stay out of the range.
    const memoryOnly = compactTable(countdown!, [], ['snapkv', 'twin', 'h2o', 'lookalike']);
    expect(memoryOnly.realised[0]).toBe(`${((1152 / 4480) * 100).toFixed(1)}%`);
    expect(memoryOnly.rows.map((row) => row.policy)).toEqual(table.rows.map((row) => row.policy));
  });

  it('marks the best score per budget — highest accuracy, lowest perplexity — unless all tie', () => {
    const [countdown, lm] = scoreViews(reportRows(fakeSweep())).map((view) => compactTable(view));
    const best = (table: typeof countdown) =>
      table!.budgets.map((_, i) =>
        table!.rows.filter((row) => row.cells[i]!.best).map((row) => row.policy),
      );
    expect(best(countdown)).toEqual([['snapkv'], ['snapkv'], ['snapkv']]);
    expect(best(lm)).toEqual([['snapkv'], ['snapkv'], ['snapkv']]);
    const tied: SweepResults = {
      ...fakeSweep(),
      cells: fakeSweep().cells.map((cell) =>
        cell.metrics.accuracy === undefined
          ? cell
          : { ...cell, metrics: { ...cell.metrics, accuracy: { mean: 0, stderr: 0, n: 256 } } },
      ),
    };
    expect(best(compactTable(scoreViews(reportRows(tied))[0]!))).toEqual([[], [], []]);
  });
});
