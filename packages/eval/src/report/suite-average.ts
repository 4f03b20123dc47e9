import { LetheError } from '@lethe/core';
import type { Aggregate } from '../harness/results';
import { type ReportRow, type RowMetrics, rowMetrics } from './rows';

/**
 * The label of the averaged rows of `tasks`: `average of 5 tasks`.
 */
export function suiteAverageLabel(tasks: readonly string[]): string {
  return `average of ${tasks.length} tasks`;
}

/**
 * The suite average as report rows, one per (policy, budget) that ran on every task of `tasks`
 * (the full cache at its budget 1 included), under the task {@link suiteAverageLabel}: each
 * metric is the unweighted mean of the tasks' means — every task weighs the same, as the kvpress
 * leaderboard averages its datasets — with a standard error that combines the tasks' as
 * independent (√Σ SE² / k) and the tasks' examples summed as its `n`. A (policy, budget) that
 * misses a task gets no row: an average over fewer tasks would not be comparable. The rows carry
 * no commands (they are not cells) and no per-example outcomes, so no paired test uses them.
 *
 * @param rows - the report's rows (`reportRows`).
 * @param tasks - the task labels to average, each with accuracy rows.
 * @throws LetheError `E_ARG` naming `tasks` when it has fewer than two labels or repeats one,
 *   `tasks[i]` for a label with no rows or no accuracy, or one that is the average's own label.
 */
export function suiteAverageRows(
  rows: readonly ReportRow[],
  tasks: readonly string[],
): ReportRow[] {
  if (!Array.isArray(tasks) || tasks.length < 2 || new Set(tasks).size !== tasks.length) {
    throw new LetheError('E_ARG', 'must list at least two distinct task labels', 'tasks');
  }
  const label = suiteAverageLabel(tasks);
  tasks.forEach((task, i) => {
    const own = rows.filter((row) => row.task === task);
    if (task === label) {
      throw new LetheError('E_ARG', 'is the label of the average itself', `tasks[${i}]`);
    }
    if (own.length === 0) {
      throw new LetheError('E_ARG', 'is not a task of the results', `tasks[${i}]`);
    }
    if (!own.every((row) => row.metrics.accuracy !== undefined)) {
      throw new LetheError(
        'E_ARG',
        'has rows without accuracy: only accuracy averages',
        `tasks[${i}]`,
      );
    }
  });
  const first = rows.filter((row) => row.task === tasks[0]);
  return first.flatMap((head): ReportRow[] => {
    const parts = tasks.map((task) =>
      rows.find(
        (row) => row.task === task && row.policy === head.policy && row.budget === head.budget,
      ),
    );
    if (parts.some((part) => part === undefined)) return [];
    const present = parts as ReportRow[];
    const average = (name: keyof RowMetrics): Aggregate | undefined => {
      const values = present.map((row) => row.metrics[name]);
      if (values.some((value) => value === undefined)) return undefined;
      return meanOfMeans(values as Aggregate[]);
    };
    const metrics = rowMetrics(average);
    return [
      {
        task: label,
        policy: head.policy,
        budget: head.budget,
        seeds: [...new Set(present.flatMap((row) => row.seeds))].sort((a, b) => a - b),
        metrics,
        commands: [],
      },
    ];
  });
}

/** The unweighted mean of aggregates, its standard error combining theirs as independent. */
function meanOfMeans(parts: readonly Aggregate[]): Aggregate {
  const k = parts.length;
  const mean = parts.reduce((sum, part) => sum + part.mean, 0) / k;
  const stderr = Math.sqrt(parts.reduce((sum, part) => sum + part.stderr ** 2, 0)) / k;
  return { mean, stderr, n: parts.reduce((sum, part) => sum + part.n, 0) };
}

/**
 * The report's rows to show per task: the suite average's (given `averageOver`) first,
 * then `rows`; and the paragraph that says what the average is (empty without one).
 */
export function rowsWithAverage(
  rows: readonly ReportRow[],
  averageOver: readonly string[] | undefined,
): { shown: ReportRow[]; paragraph: string } {
  if (averageOver === undefined) return { shown: [...rows], paragraph: '' };
  const averaged = suiteAverageRows(rows, averageOver);
  return {
    shown: [...averaged, ...rows],
    paragraph:
      `The first section, ${suiteAverageLabel(averageOver)}, averages the accuracy of ` +
      `${averageOver.join(', ')}: every task weighs the same, and the interval combines ` +
      "the tasks' standard errors as independent (cut to 0–100 %). A policy has an average at a budget only where " +
      'it ran on every one of those tasks.',
  };
}
