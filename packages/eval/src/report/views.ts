import { identicalGroups } from './identical';
import type { ReportRow } from './rows';
import { rowScore, SCORE_METRICS, type Score, type ScoreMetric } from './score';

/** A report row with its score. */
export interface ScoredRow {
  readonly row: ReportRow;
  readonly score: Score;
}

/** What the report shows of one task's score: its plots, legend and policy × budget table. */
export interface ScoreView {
  readonly task: string;
  /** The task's name made safe for element ids (unique within the report). */
  readonly slug: string;
  readonly metric: ScoreMetric;
  /** The task's rows that have the score, in report order. */
  readonly rows: readonly ScoredRow[];
  /** Policies with identical results, each group in row order (see `identicalGroups`). */
  readonly identical: readonly (readonly string[])[];
}

/**
 * The score views of a report, in task order and, within a task, in {@link SCORE_METRICS}
 * order (accuracy, perplexity): one per task and score its rows have. Slugs replace runs of
 * characters outside `[A-Za-z0-9_-]` in the task name by `-`, drop leading and trailing `-`,
 * and add a numeric suffix when two tasks would collide.
 */
export function scoreViews(rows: readonly ReportRow[]): ScoreView[] {
  const tasks = [...new Set(rows.map((row) => row.task))];
  const slugs = uniqueSlugs(tasks);
  return tasks.flatMap((task) =>
    SCORE_METRICS.flatMap((metric) => {
      const scored = rows
        .filter((row) => row.task === task)
        .flatMap((row) => {
          const score = rowScore(row, metric);
          return score === undefined ? [] : [{ row, score }];
        });
      if (scored.length === 0) return [];
      return [
        {
          task,
          slug: slugs.get(task)!,
          metric,
          rows: scored,
          identical: identicalGroups(scored, metric),
        },
      ];
    }),
  );
}

function uniqueSlugs(tasks: readonly string[]): Map<string, string> {
  const slugs = new Map<string, string>();
  const used = new Set<string>();
  for (const task of tasks) {
    const base = task.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '') || 'task';
    let slug = base;
    for (let n = 2; used.has(slug); n++) slug = `${base}-${n}`;
    used.add(slug);
    slugs.set(task, slug);
  }
  return slugs;
}
