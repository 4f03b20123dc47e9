import { formatBudget, formatCount, formatMean, formatScoreWithInterval } from './format';
import type { ReportRow } from './rows';
import { rowScore, SCORE_METRICS, type ScoreMetric } from './score';

/** A numeric or text column of the full results table; the reproduce commands are a last column. */
export interface TableColumn {
  readonly header: string;
  readonly numeric: boolean;
  /** The cell as plain (unescaped) text. */
  readonly cell: (row: ReportRow) => string;
}

const scoreColumn = (metric: ScoreMetric): TableColumn => ({
  header: `${metric.name} (95% CI)`,
  numeric: true,
  cell: (row) => formatScoreWithInterval(rowScore(row, metric), metric),
});

/** The columns shared by the Markdown and HTML full tables, before the reproduce column. */
export const TABLE_COLUMNS: readonly TableColumn[] = [
  { header: 'task', numeric: false, cell: (row) => row.task },
  { header: 'policy', numeric: false, cell: (row) => row.policy },
  { header: 'budget', numeric: true, cell: (row) => formatBudget(row.budget) },
  {
    header: 'realised budget',
    numeric: true,
    cell: (row) => formatMean(row.metrics.realisedBudget, 1, { scale: 100, unit: '%' }),
  },
  { header: 'examples (seeds)', numeric: true, cell: examplesAndSeeds },
  ...SCORE_METRICS.map(scoreColumn),
  {
    header: 'peak KV reduction',
    numeric: true,
    cell: (row) => formatMean(row.metrics.peakKvReduction, 2, { unit: '×' }),
  },
  {
    header: 'net keep-rate',
    numeric: true,
    cell: (row) => formatMean(row.metrics.netKeepRate, 3),
  },
  {
    header: 'live KV mean / peak',
    numeric: true,
    cell: (row) =>
      `${formatCount(row.metrics.meanLive.mean)} / ${formatCount(row.metrics.peakLive.mean)}`,
  },
  { header: 'tokens/s', numeric: true, cell: (row) => formatMean(row.metrics.tokensPerSecond, 0) },
];

/** Header of the reproduce-command column. */
export const COMMAND_HEADER = 'reproduce';

/**
 * Examples the row's score pools and the seeds they come from, by id: `32 (seed 0)`,
 * `64 (seeds 0, 1)` — a count and ids, never one that reads as the other.
 */
function examplesAndSeeds(row: ReportRow): string {
  const n = (row.metrics.accuracy ?? row.metrics.perplexity ?? row.metrics.peakLive).n;
  const seeds = row.seeds.length === 1 ? 'seed' : 'seeds';
  return `${n} (${seeds} ${row.seeds.join(', ')})`;
}
