import { FULL_CACHE } from '@lethe/kv-cache';
import type { ChartPoint, ChartSeries, ChartSpec } from './chart';
import { formatBudget, formatCount, policyLabel } from './format';
import { policyOrdering, type ReportRow } from './rows';

/** The plots of one task, in display order. */
export interface TaskPlots {
  readonly task: string;
  readonly charts: readonly ChartSpec[];
}

/** Okabe–Ito colours (distinguishable with colour-vision deficiencies), yellow left out. */
const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9'];
/** Dash patterns that tell apart policies sharing a colour once the palette wraps. */
const DASHES = ['none', '6 3', '2 3'];
const FULL_STYLE = { color: '#000000', dash: '6 4' };

/**
 * The charts of a report, per task: accuracy against mean peak live KV entries when the task's
 * rows have accuracy (NGC Figure 3, right), and perplexity against SOL net keep-rate when they
 * have perplexity (SOL Figure 2). Each policy is one series across its budgets, the full cache a
 * dashed reference; colours are fixed per policy across all charts. Figure ids are
 * `plot-<task>-accuracy` / `plot-<task>-perplexity`, where runs of characters outside
 * `[A-Za-z0-9_-]` in the task name become `-`, leading and trailing `-` are dropped, and a
 * numeric suffix is added if two tasks then collide.
 */
export function reportPlots(rows: readonly ReportRow[]): TaskPlots[] {
  const order = policyOrdering(rows.map((row) => row.policy));
  const styles = new Map<string, { color: string; dash: string }>();
  let next = 0;
  for (const policy of order.keys()) {
    if (policy === FULL_CACHE) {
      styles.set(policy, FULL_STYLE);
    } else {
      const color = PALETTE[next % PALETTE.length]!;
      const dash = DASHES[Math.floor(next / PALETTE.length) % DASHES.length]!;
      styles.set(policy, { color, dash });
      next += 1;
    }
  }
  const tasks = [...new Set(rows.map((row) => row.task))];
  const slugs = uniqueSlugs(tasks);
  return tasks.map((task) => {
    const taskRows = rows.filter((row) => row.task === task);
    const series = (point: (row: ReportRow) => ChartPoint | undefined): ChartSeries[] =>
      [...order.keys()].flatMap((policy) => {
        const points = taskRows
          .filter((row) => row.policy === policy)
          .flatMap((row) => point(row) ?? []);
        if (points.length === 0) return [];
        return [
          {
            key: policy,
            label: policyLabel(policy),
            ...styles.get(policy)!,
            reference: policy === FULL_CACHE,
            points,
          },
        ];
      });
    const charts: ChartSpec[] = [];
    if (taskRows.some((row) => row.metrics.accuracy !== undefined)) {
      charts.push({
        id: `plot-${slugs.get(task)}-accuracy`,
        title: `Accuracy vs peak KV entries: ${task}`,
        caption:
          'Exact-match accuracy (mean ± 1 SE over examples) against the mean peak number of live ' +
          'KV entries (summed over layers and heads), one line per policy across its budgets; the ' +
          'dashed line marks the full cache (cf. NGC Figure 3, right).',
        xLabel: 'Peak live KV entries (mean over examples)',
        yLabel: 'Accuracy',
        yUnit: '%',
        yFromZero: true,
        series: series(accuracyPoint),
      });
    }
    const perplexityRows = taskRows.filter((row) => row.metrics.perplexity !== undefined);
    if (perplexityRows.length > 0) {
      const omitted = perplexityRows.filter((row) => netKeep(row) === undefined).length;
      charts.push({
        id: `plot-${slugs.get(task)}-perplexity`,
        title: `Perplexity vs net keep-rate: ${task}`,
        caption:
          'Teacher-forced perplexity (mean ± 1 SE) against the SOL net keep-rate (realised ' +
          'fraction of full-cache attention reads), one line per policy across its budgets; the ' +
          'dashed line marks the full cache, at net keep-rate 1 (cf. SOL Figure 2).' +
          (omitted > 0 ? ` ${omitted} row(s) without a net keep-rate are not shown.` : ''),
        xLabel: 'Net keep-rate',
        yLabel: 'Perplexity',
        yUnit: '',
        // Perplexity is at least 1: an axis from 0 never shows impossible negative ticks.
        yFromZero: true,
        series: series(perplexityPoint),
      });
    }
    return { task, charts };
  });
}

function accuracyPoint(row: ReportRow): ChartPoint | undefined {
  const { accuracy, peakLive } = row.metrics;
  if (accuracy === undefined) return undefined;
  return {
    x: peakLive.mean,
    y: accuracy.mean * 100,
    yError: accuracy.stderr * 100,
    note:
      `${policyLabel(row.policy)}, budget ${formatBudget(row.budget)}: accuracy ` +
      `${(accuracy.mean * 100).toFixed(1)}% ± ${(accuracy.stderr * 100).toFixed(1)}, ` +
      `peak ${formatCount(peakLive.mean)} KV entries`,
  };
}

function perplexityPoint(row: ReportRow): ChartPoint | undefined {
  const { perplexity } = row.metrics;
  const x = netKeep(row);
  if (perplexity === undefined || x === undefined) return undefined;
  return {
    x,
    y: perplexity.mean,
    yError: perplexity.stderr,
    note:
      `${policyLabel(row.policy)}, budget ${formatBudget(row.budget)}: perplexity ` +
      `${perplexity.mean.toFixed(2)} ± ${perplexity.stderr.toFixed(2)}, net keep-rate ${x.toFixed(3)}`,
  };
}

/** The row's net keep-rate; the full cache reads every entry, so it is 1 there by definition. */
function netKeep(row: ReportRow): number | undefined {
  return row.metrics.netKeepRate?.mean ?? (row.policy === FULL_CACHE ? 1 : undefined);
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
