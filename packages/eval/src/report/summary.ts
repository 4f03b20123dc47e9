import type { SweepResults } from '../harness/results';
import { type TaskSpec, taskLabel } from '../harness/sweep-config';
import type { ReportRow } from './rows';

/** How a budget becomes a capacity, stated in every report (see `capacityFor`). */
const BUDGET_NOTE =
  'A budget b gives each example a ceiling of max(2, ⌈b · P⌉) live entries per KV head, P being ' +
  'that example’s own full-cache peak per head (measured by the full-cache run of the same ' +
  'sequence; n − 1 for a teacher-forced document of n tokens); the realised budget is the ' +
  'measured peak over the full-cache peak.';

/** The budget rule of a rate-schedule sweep (`SweepConfig.rateEvery`), stated in its report. */
function rateBudgetNote(every: number): string {
  return (
    `Budgets are a rate schedule: every ${every} tokens (prefill included) each policy keeps ` +
    `⌈b · live⌉ entries per KV head (eviction rate ε = 1 − b per round); the realised budget is ` +
    'the measured peak over the full-cache peak.'
  );
}

/** How the report's intervals are computed, stated in every report (see `rowScore`). */
const INTERVAL_NOTE =
  'Scores are means over the examples of all seeds of a row, pooled, with 95% confidence ' +
  'intervals: for accuracy (the fraction of examples solved) the Wilson score interval of the ' +
  'pooled outcomes; for perplexity, and accuracy over several samples per example, ' +
  'mean ± t·SE with Student’s t at n − 1 degrees of freedom. ' +
  'Other columns are means over examples.';

/**
 * The opening paragraphs of a report: what the sweep holds (cells, rows, tasks, policies, and
 * how many examples and which seeds each point pools), the budget rule (its config's
 * `rateEvery`: a rate schedule when it is a number, ceilings otherwise; and each task's own), and
 * the interval method.
 */
export function summaryParagraphs(results: SweepResults, rows: readonly ReportRow[]): string[] {
  const rateEvery = results.config.rateEvery;
  const tasks = [...new Set(rows.map((row) => row.task))];
  const policies = [...new Set(rows.map((row) => row.policy))];
  const counts = [
    ...new Set(
      rows.map((row) => (row.metrics.accuracy ?? row.metrics.perplexity ?? row.metrics.peakLive).n),
    ),
  ].sort((a, b) => a - b);
  const seeds = [...new Set(rows.flatMap((row) => row.seeds))].sort((a, b) => a - b);
  const examples =
    counts.length === 1 ? `${counts[0]}` : `${counts[0]}–${counts[counts.length - 1]}`;
  return [
    `${results.cells.length} cells in ${rows.length} rows; tasks: ${tasks.join(', ')}; ` +
      `policies: ${policies.join(', ')}. Each point pools ${examples} examples ` +
      `(${seeds.length === 1 ? 'seed' : `${seeds.length} seeds:`} ${seeds.join(', ')}).`,
    [
      typeof rateEvery === 'number' ? rateBudgetNote(rateEvery) : BUDGET_NOTE,
      ...ownRules(results),
    ].join(' '),
    INTERVAL_NOTE,
  ];
}

/** A sentence per task with a budget rule of its own (`TaskSpec.rateEvery`). */
function ownRules(results: SweepResults): string[] {
  const tasks = (results.config.tasks ?? []) as readonly TaskSpec[];
  return tasks.flatMap((task) => {
    if (task === null || typeof task !== 'object' || task.rateEvery === undefined) return [];
    const rule =
      task.rateEvery === null
        ? 'ceilings of max(2, ⌈b · P⌉) live entries per KV head'
        : `a rate schedule: every ${task.rateEvery} tokens each policy keeps ⌈b · live⌉ entries per KV head`;
    return [`Task ${taskLabel(task)} has its own rule, ${rule}.`];
  });
}
