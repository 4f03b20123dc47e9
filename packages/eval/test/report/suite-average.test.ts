import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import type { SweepResults } from '../../src/harness/results';
import { renderHtml, renderMarkdown, reportRows, suiteAverageRows } from '../../src/report/index';
import { cell, fakeSweep } from './fixture';

/** Three accuracy tasks; `snapkv` misses task c at 0.25 and `h2o` runs only at 0.5. */
function suiteSweep(): SweepResults {
  const accuracies: Record<string, number[]> = { a: [0.9, 0.5], b: [0.7, 0.25], c: [0.5, 0] };
  const cells = Object.entries(accuracies).flatMap(([task, [full, low]]) => [
    cell(task, 'full', 1, {
      accuracy: full!,
      peak: 100,
      live: 50,
      fullPeak: 100,
      tokensPerSecond: 10,
    }),
    cell(task, 'snapkv', 0.5, {
      accuracy: low!,
      peak: 50,
      live: 30,
      fullPeak: 100,
      tokensPerSecond: 12,
    }),
    ...(task === 'c'
      ? []
      : [
          cell(task, 'snapkv', 0.25, {
            accuracy: low! / 2,
            peak: 25,
            live: 20,
            fullPeak: 100,
            tokensPerSecond: 14,
          }),
        ]),
    cell(task, 'h2o', 0.5, {
      accuracy: low! + 0.125,
      peak: 50,
      live: 30,
      fullPeak: 100,
      tokensPerSecond: 11,
    }),
  ]);
  return { ...fakeSweep(), cells };
}

describe('the suite average', () => {
  it('averages each (policy, budget) present on every task, each task weighing the same', () => {
    const rows = reportRows(suiteSweep());
    const averaged = suiteAverageRows(rows, ['a', 'b', 'c']);
    expect(averaged.map((row) => `${row.task}/${row.policy}@${row.budget}`)).toEqual([
      'average of 3 tasks/full@1',
      'average of 3 tasks/snapkv@0.5',
      'average of 3 tasks/h2o@0.5',
    ]);
    const [full, snapkv] = averaged;
    // brute force: the plain mean of the three tasks' rows
    const of = (task: string, policy: string, budget: number) =>
      rows.find((r) => r.task === task && r.policy === policy && r.budget === budget)!;
    const parts = ['a', 'b', 'c'].map((task) => of(task, 'snapkv', 0.5).metrics.accuracy!);
    expect(snapkv!.metrics.accuracy!.mean).toBeCloseTo((0.5 + 0.25 + 0) / 3, 12);
    expect(snapkv!.metrics.accuracy!.stderr).toBeCloseTo(
      Math.sqrt(parts.reduce((s, p) => s + p.stderr ** 2, 0)) / 3,
      12,
    );
    expect(snapkv!.metrics.accuracy!.n).toBe(parts.reduce((s, p) => s + p.n, 0));
    expect(snapkv!.metrics.realisedBudget!.mean).toBeCloseTo(0.5, 12);
    const fullMeans = ['a', 'b', 'c'].map((task) => of(task, 'full', 1).metrics.accuracy!.mean);
    expect(full!.metrics.accuracy!.mean).toBeCloseTo(
      (fullMeans[0]! + fullMeans[1]! + fullMeans[2]!) / 3,
      12,
    );
    expect(full!.commands).toEqual([]);
    expect(full!.outcomes).toBeUndefined();
    // over a and b only, snapkv has its 0.25 row too
    expect(suiteAverageRows(rows, ['a', 'b']).map((r) => `${r.policy}@${r.budget}`)).toEqual([
      'full@1',
      'snapkv@0.5',
      'snapkv@0.25',
      'h2o@0.5',
    ]);
  });

  it('comes first in both reports, its rows kept out of the table of cells', () => {
    const results = suiteSweep();
    const markdown = renderMarkdown(results, { averageOver: ['a', 'b', 'c'] });
    const sections = markdown.split('\n## ').map((s) => s.split('\n')[0]);
    expect(sections.slice(1)).toEqual(['average of 3 tasks', 'a', 'b', 'c', 'All rows']);
    expect(markdown).toContain('averages the accuracy of a, b, c: every task weighs the same');
    const allRows = markdown.slice(markdown.indexOf('## All rows'));
    expect(allRows).not.toContain('average of');
    expect(renderMarkdown(results)).not.toContain('average of');
    const html = renderHtml(results, { averageOver: ['a', 'b', 'c'] });
    const first = html.indexOf('<section class="task"');
    expect(html.slice(first, first + 200)).toContain('average of 3 tasks');
    expect(html).toMatch(/id="plot-average-of-3-tasks-accuracy-budget"/);
  });

  it('refuses what it cannot average, naming the argument', () => {
    const rows = reportRows(suiteSweep());
    expectLetheError(() => suiteAverageRows(rows, ['a']), 'E_ARG', 'tasks');
    expectLetheError(() => suiteAverageRows(rows, ['a', 'a']), 'E_ARG', 'tasks');
    expectLetheError(() => suiteAverageRows(rows, ['a', 'nope']), 'E_ARG', 'tasks[1]');
    expectLetheError(
      () => suiteAverageRows(reportRows(fakeSweep()), ['countdown', 'lm']),
      'E_ARG',
      'tasks[1]',
    );
    expectLetheError(
      () => renderMarkdown(suiteSweep(), { averageOver: ['a', 'zz'] }),
      'E_ARG',
      'tasks[1]',
    );
  });
});
