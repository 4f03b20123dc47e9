import type { Aggregate } from '../harness/results';
import { type Interval, meanInterval, wilsonInterval } from './interval';
import type { ReportRow } from './rows';

/** A task score the report plots and tabulates: how to read it and how to print it. */
export interface ScoreMetric {
  readonly name: 'accuracy' | 'perplexity';
  /** Axis and column title. */
  readonly label: string;
  /** Factor from the stored value to the shown one (100 for a percentage). */
  readonly scale: number;
  readonly unit: string;
  readonly digits: number;
  readonly higherIsBetter: boolean;
}

/** The scores, in the order a task that has several shows them. */
export const SCORE_METRICS: readonly ScoreMetric[] = [
  {
    name: 'accuracy',
    label: 'Accuracy',
    scale: 100,
    unit: '%',
    digits: 1,
    higherIsBetter: true,
  },
  {
    name: 'perplexity',
    label: 'Perplexity',
    scale: 1,
    unit: '',
    digits: 2,
    higherIsBetter: false,
  },
];

/** A row's score with its 95% confidence interval, in shown units (percent for accuracy). */
export interface Score {
  readonly mean: number;
  readonly interval: Interval;
  /** Examples (over all pooled seeds) it was measured on. */
  readonly n: number;
  /** `wilson`: Wilson score interval of a proportion; `t`: mean ± t·SE. */
  readonly method: 'wilson' | 't';
}

/**
 * The row's `metric` with a 95% interval, pooled over its seeds' examples; undefined when the
 * row lacks the metric. Accuracy is a proportion when each example is solved or not: then the
 * interval is Wilson's, from the pooled outcomes (`row.outcomes`) or, in results without them,
 * from the aggregate — whose mean · n is the count solved and whose standard error is then
 * √(p(1 − p)/(n − 1)), which is checked. Anything else (perplexity, accuracy over several
 * samples per example, a suite's average accuracy) gets mean ± t·SE with n − 1 degrees of
 * freedom — for accuracy cut to [0, 1], the range it lies in (a near-0 average would otherwise
 * reach below 0).
 */
export function rowScore(row: ReportRow, metric: ScoreMetric): Score | undefined {
  const value = row.metrics[metric.name];
  if (value === undefined) return undefined;
  const counts = metric.name === 'accuracy' ? successCounts(row, value) : undefined;
  const interval =
    counts !== undefined
      ? wilsonInterval(...counts)
      : metric.name === 'accuracy'
        ? withinUnit(meanInterval(value))
        : meanInterval(value);
  return {
    mean: value.mean * metric.scale,
    interval: { low: interval.low * metric.scale, high: interval.high * metric.scale },
    n: counts?.[1] ?? value.n,
    method: counts === undefined ? 't' : 'wilson',
  };
}

/** `interval` cut to [0, 1]. */
function withinUnit(interval: Interval): Interval {
  return { low: Math.max(0, interval.low), high: Math.min(1, interval.high) };
}

/** [successes, trials] when the accuracy is a proportion of single outcomes, else undefined. */
function successCounts(row: ReportRow, value: Aggregate): [number, number] | undefined {
  if (row.outcomes !== undefined) return [row.outcomes.correct, row.outcomes.total];
  const { mean, stderr, n } = value;
  const successes = Math.round(mean * n);
  if (Math.abs(successes - mean * n) > 1e-6 || successes < 0 || successes > n) return undefined;
  const binary = n === 1 ? 0 : Math.sqrt((mean * (1 - mean)) / (n - 1));
  return Math.abs(stderr - binary) <= 1e-9 + 1e-6 * binary ? [successes, n] : undefined;
}
