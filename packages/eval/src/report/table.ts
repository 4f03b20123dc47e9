import type { SweepResults } from '../harness/results';
import { formatAggregate, formatBudget, formatCount } from './format';
import type { ReportRow } from './rows';

/** A numeric or text column of the results table; the reproduce commands are a last column. */
export interface TableColumn {
  readonly header: string;
  readonly numeric: boolean;
  /** The cell as plain (unescaped) text. */
  readonly cell: (row: ReportRow) => string;
}

/** The columns shared by the Markdown and HTML results tables, before the reproduce column. */
export const TABLE_COLUMNS: readonly TableColumn[] = [
  { header: 'task', numeric: false, cell: (row) => row.task },
  { header: 'policy', numeric: false, cell: (row) => row.policy },
  { header: 'budget', numeric: true, cell: (row) => formatBudget(row.budget) },
  {
    header: 'realised budget',
    numeric: true,
    cell: (row) => formatAggregate(row.metrics.realisedBudget, 1, { scale: 100, unit: '%' }),
  },
  { header: 'seeds', numeric: true, cell: (row) => row.seeds.join(', ') },
  {
    header: 'accuracy',
    numeric: true,
    cell: (row) => formatAggregate(row.metrics.accuracy, 1, { scale: 100, unit: '%' }),
  },
  {
    header: 'perplexity',
    numeric: true,
    cell: (row) => formatAggregate(row.metrics.perplexity, 2),
  },
  {
    header: 'peak KV reduction',
    numeric: true,
    cell: (row) => formatAggregate(row.metrics.peakKvReduction, 2, { unit: '×' }),
  },
  {
    header: 'net keep-rate',
    numeric: true,
    cell: (row) => formatAggregate(row.metrics.netKeepRate, 3),
  },
  {
    header: 'live KV mean / peak',
    numeric: true,
    cell: (row) =>
      `${formatCount(row.metrics.meanLive.mean)} / ${formatCount(row.metrics.peakLive.mean)}`,
  },
  {
    header: 'tokens/s',
    numeric: true,
    cell: (row) => formatAggregate(row.metrics.tokensPerSecond, 1),
  },
];

/** Header of the reproduce-command column. */
export const COMMAND_HEADER = 'reproduce';

/** How a budget becomes a capacity, stated in every report (see `capacityFor`). */
export const BUDGET_NOTE =
  'A budget b gives each example a ceiling of max(2, ⌈b · P⌉) live entries per KV head, P being ' +
  'that example’s own full-cache peak per head (measured by the full-cache run of the same ' +
  'sequence; n − 1 for a teacher-forced document of n tokens); the realised budget is the ' +
  'measured peak over the full-cache peak.';

/** The budget rule of a rate-schedule sweep (`SweepConfig.rateEvery`), stated in its report. */
export function rateBudgetNote(every: number): string {
  return (
    `Budgets are a rate schedule: every ${every} tokens (prefill included) each policy keeps ` +
    `⌈b · live⌉ entries per KV head (eviction rate ε = 1 − b per round); the realised budget is ` +
    'the measured peak over the full-cache peak.'
  );
}

/**
 * One line summarising a sweep: cells, rows, tasks and policies, and the budget rule (its
 * config's `rateEvery`: a rate schedule when it is a number, ceilings otherwise).
 */
export function summaryLine(results: SweepResults, rows: readonly ReportRow[]): string {
  const rateEvery = results.config.rateEvery;
  const tasks = [...new Set(rows.map((row) => row.task))];
  const policies = [...new Set(rows.map((row) => row.policy))];
  return (
    `${results.cells.length} cells in ${rows.length} rows (seeds pooled); tasks: ${tasks.join(', ')}; ` +
    `policies: ${policies.join(', ')}. Values are mean ± 1 standard error over examples. ` +
    (typeof rateEvery === 'number' ? rateBudgetNote(rateEvery) : BUDGET_NOTE)
  );
}
