import { FULL_CACHE } from '@lethe/kv-cache';
import { wantsLog } from './axis';
import type { BaselineComparison } from './best-heuristic';
import type { ChartPoint, ChartSeries, ChartSpec } from './chart';
import { formatBudget, formatCount, formatInterval, formatScore, policyLabel } from './format';
import type { SeriesStyle } from './markers';
import type { ReportRow } from './rows';
import { policyStyles } from './styles';
import { VERDICT_MARKS_NOTE, verdictMark } from './verdict-marks';
import { type ScoredRow, type ScoreView, scoreViews } from './views';

/** An entry of a task's legend: one series, or several identical ones drawn as one. */
export interface LegendEntry {
  /** The policy drawn (the first of identical ones), as in `data-series`. */
  readonly key: string;
  /** `h2o`, `full cache`, or identical policies joined: `knorm = l2norm`. */
  readonly label: string;
  readonly style: SeriesStyle;
  readonly reference: boolean;
}

/** The plots of one task's score, with the legend they share. */
export interface TaskPlots {
  readonly view: ScoreView;
  readonly legend: readonly LegendEntry[];
  /**
   * Score vs realised budget, then score vs peak KV memory (then, for compute policies and read
   * selectors, vs net keep-rate).
   */
  readonly charts: readonly ChartSpec[];
}

/** The x of a chart: what it reads from a row, and how it is titled. */
interface XChoice {
  readonly suffix: string;
  readonly title: string;
  /** What the caption calls it. */
  readonly noun: string;
  readonly label: string;
  readonly unit: string;
  readonly value: (row: ReportRow) => number | undefined;
  readonly show: (row: ReportRow) => string;
}

/**
 * The value and point text of an x that is a fraction metric of the row, in %: the full cache's
 * is 100% (it keeps everything), a row without the metric has none.
 */
function percentX(
  metric: 'realisedBudget' | 'netKeepRate',
  name: string,
): Pick<XChoice, 'value' | 'show'> {
  return {
    value: (row) => {
      if (row.policy === FULL_CACHE) return 100;
      const value = row.metrics[metric];
      return value === undefined ? undefined : value.mean * 100;
    },
    show: (row) => {
      const value = row.metrics[metric];
      return value === undefined ? '' : `${name} ${(value.mean * 100).toFixed(1)}%`;
    },
  };
}

/**
 * The x of a compute policy's or read selector's chart: its net keep-rate (the full cache keeps
 * everything).
 */
const NET_KEEP_RATE: XChoice = {
  suffix: 'net-keep-rate',
  title: 'vs net keep-rate',
  noun: 'net keep-rate (SOL: the mean realised keep rate of the axes a compute policy controls; Quest: the mean share of the live entries a step reads)',
  label: 'Net keep-rate',
  unit: '%',
  ...percentX('netKeepRate', 'net keep-rate'),
};

const REALISED_BUDGET: XChoice = {
  suffix: 'budget',
  title: 'vs realised budget',
  noun: 'realised budget (the peak KV entries held over the full-cache peak)',
  label: 'Realised budget (peak KV ÷ full-cache peak)',
  unit: '%',
  ...percentX('realisedBudget', 'realised'),
};

/** The peak memory as bytes of keys and values, in KiB (see `CellMetrics.peakKvBytes`). */
const PEAK_KV_BYTES: XChoice = {
  suffix: 'peak',
  title: 'vs peak KV memory',
  noun: 'peak KV memory (bytes of the keys and values held at the peak, mean over examples)',
  label: 'Peak KV memory (KiB of keys and values, mean over examples)',
  unit: '',
  value: (row) => kib(row),
  show: (row) => {
    const value = kib(row);
    return value === undefined ? '' : `peak KV ${formatCount(value)} KiB`;
  },
};

/** The peak memory as entries, for results written before they recorded bytes. */
const PEAK_KV_ENTRIES: XChoice = {
  suffix: 'peak',
  title: 'vs peak KV entries',
  noun: 'peak number of live KV entries (summed over layers and heads, mean over examples)',
  label: 'Peak live KV entries (mean over examples)',
  unit: '',
  value: (row) => row.metrics.peakLive.mean,
  show: (row) => `peak ${formatCount(row.metrics.peakLive.mean)} KV entries`,
};

function kib(row: ReportRow): number | undefined {
  const bytes = row.metrics.peakKvBytes;
  return bytes === undefined ? undefined : bytes.mean / 1024;
}

/**
 * The plots of a report, per task and score (accuracy, perplexity): the score against the
 * realised budget and against the peak KV memory in KiB (the mean peak KV entries where a row
 * does not record bytes) — as KV-compression leaderboards show them — with one line per policy through its budgets, each point labelled with its budget, 95%
 * confidence intervals as error bars, and the full cache as a dashed reference line over the
 * band of its interval. Each policy has one colour and marker across all plots
 * (`policyStyles`); policies with identical results (`identicalGroups`) are drawn once and
 * named together in the legend; markers that would coincide are set side by side. An axis
 * whose values span a factor of 5 or more is logarithmic (`wantsLog`); the y axis is fitted to
 * the scores and their intervals (not from 0), accuracy linear within 0–100%. Figure ids are `plot-<task slug>-<score>-budget` and `…-peak`.
 *
 * A point whose policy `comparisons` found better or worse than the best heuristic at its budget
 * has ▲ or ▼ beside its marker (see `verdictMark`), and the caption says what they mean.
 *
 * Policies named in `computePolicies` (SOL's, Quest: they prune compute or reads, not memory, so
 * they would stand in a column at a realised budget of 100%) are drawn on a third plot of their own, the score
 * against their net keep-rate (`…-net-keep-rate`), beside the full cache, and not on the other two.
 */
export function reportPlots(
  rows: readonly ReportRow[],
  computePolicies: readonly string[] = [],
  comparisons: readonly BaselineComparison[] = [],
): TaskPlots[] {
  const styles = policyStyles(rows.map((row) => row.policy));
  return scoreViews(rows).map((view) => {
    const merged = new Map(view.identical.map((group) => [group[0]!, group]));
    const hidden = new Set(view.identical.flatMap((group) => group.slice(1)));
    const policies = [...new Set(view.rows.map((entry) => entry.row.policy))].filter(
      (policy) => !hidden.has(policy),
    );
    const legend = policies.map((policy) => ({
      key: policy,
      label: (merged.get(policy) ?? [policy]).map(policyLabel).join(' = '),
      style: styles.get(policy)!,
      reference: policy === FULL_CACHE,
    }));
    const compute = legend.filter((entry) => computePolicies.includes(entry.key));
    const memory = legend.filter((entry) => !computePolicies.includes(entry.key));
    const bytes = view.rows.every((entry) => entry.row.metrics.peakKvBytes !== undefined);
    const charts = [REALISED_BUDGET, bytes ? PEAK_KV_BYTES : PEAK_KV_ENTRIES].map((choice) =>
      chart(view, memory, choice, comparisons),
    );
    if (compute.length > 0) {
      const reference = legend.filter((entry) => entry.reference);
      charts.push(chart(view, [...reference, ...compute], NET_KEEP_RATE, comparisons));
    }
    return { view, legend, charts };
  });
}

function chart(
  view: ScoreView,
  legend: readonly LegendEntry[],
  choice: XChoice,
  comparisons: readonly BaselineComparison[],
): ChartSpec {
  const { metric } = view;
  let marked = false;
  const point = ({ row, score }: ScoredRow): ChartPoint[] => {
    const x = choice.value(row);
    if (x === undefined) return [];
    const mark = verdictMark(comparisons, view.task, row.policy, row.budget);
    if (mark !== '') marked = true;
    const details = [
      `${metric.label.toLowerCase()} ${formatScore(score, metric)}`,
      `95% CI ${formatInterval(score, metric)}`,
      choice.show(row),
      `n = ${score.n}`,
      mark === '' ? '' : `${mark} against the best heuristic`,
    ].filter((part) => part !== '');
    return [
      {
        x,
        y: score.mean,
        interval: score.interval,
        label: formatBudget(row.budget),
        ...(mark === '' ? {} : { mark }),
        note: `${policyLabel(row.policy)}, budget ${formatBudget(row.budget)}: ${details.join(', ')}`,
      },
    ];
  };
  const series: ChartSeries[] = legend.map((entry) => ({
    key: entry.key,
    label: entry.label,
    color: entry.style.color,
    dash: entry.style.dash,
    marker: entry.style.marker,
    reference: entry.reference,
    points: view.rows.filter((scored) => scored.row.policy === entry.key).flatMap(point),
  }));
  const xs = series.flatMap((entry) => entry.points.map((p) => p.x));
  const ys = series.flatMap((entry) =>
    entry.points.flatMap((p) => [p.y, p.interval!.low, p.interval!.high]),
  );
  const shown = series.reduce((sum, entry) => sum + entry.points.length, 0);
  const drawn = view.rows.filter((scored) => legend.some((e) => e.key === scored.row.policy));
  const omitted = drawn.length - shown;
  const methods = new Set(view.rows.map((scored) => scored.score.method));
  const method = [...methods].map((name) => (name === 'wilson' ? 'Wilson' : 'mean ± t·SE'));
  const identical = view.identical.map((group) => group.map(policyLabel).join(' = '));
  return {
    id: `plot-${view.slug}-${metric.name}-${choice.suffix}`,
    title: `${metric.label} ${choice.title}: ${view.task}`,
    caption:
      `Against the ${choice.noun}; one line per policy through its budgets (above the plot), ` +
      `error bars 95% intervals (${method.join(' or ')}); dashed, over the band of its interval: the full ` +
      'cache. Coinciding markers are set side by side.' +
      (identical.length > 0 ? ` Identical results, drawn once: ${identical.join('; ')}.` : '') +
      (omitted > 0 ? ` ${omitted} row(s) without this x are not shown.` : '') +
      (marked ? ` ${VERDICT_MARKS_NOTE}` : ''),
    xLabel: choice.label,
    xUnit: choice.unit,
    xLog: xs.length > 0 && wantsLog(xs),
    yLabel: metric.unit === '' ? metric.label : `${metric.label} (${metric.unit})`,
    yUnit: metric.unit,
    yFromZero: false,
    ...(metric.name === 'accuracy'
      ? { yBounds: [0, 100] as const }
      : { yLog: ys.length > 0 && wantsLog(ys) }),
    legend: false,
    dodge: true,
    series,
  };
}
