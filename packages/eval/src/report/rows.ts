import { LetheError } from '@lethe/core';
import { FULL_CACHE } from '@lethe/kv-cache';
import {
  type Aggregate,
  type CellMetrics,
  type CellResult,
  OPTIONAL_METRICS,
  REQUIRED_METRICS,
  RESULTS_FORMAT,
  RESULTS_VERSION,
  type SequenceOutcome,
  type SweepResults,
} from '../harness/results';
import { isAggregate, poolAggregates } from '../metrics/aggregate';

/** The aggregate metrics of a report row (pass@k is per cell and not pooled). */
export type RowMetrics = Omit<CellMetrics, 'passAtK'>;

/** One row of the report: a (task, policy, budget) with its seeds pooled. */
export interface ReportRow {
  readonly task: string;
  readonly policy: string;
  readonly budget: number;
  /** Seeds of the pooled cells, ascending. */
  readonly seeds: readonly number[];
  /** Every metric pooled over the seeds' examples as if computed on all of them at once. */
  readonly metrics: RowMetrics;
  /** The reproduce commands of the pooled cells, in seed order. */
  readonly commands: readonly string[];
  /**
   * The pooled per-example outcomes behind `metrics.accuracy`, when every cell of the row
   * carries its `sequences` with one sequence per example (one sample each): examples solved and
   * examples in all. Absent otherwise (no sequences, or several samples per example).
   */
  readonly outcomes?: { readonly correct: number; readonly total: number };
}

/**
 * Groups the cells of a sweep into report rows, one per (task, policy, budget), pooling the
 * seeds with `poolAggregates` (and their per-example outcomes, see `ReportRow.outcomes`). Rows are ordered by task (first appearance), then policy
 * (the full cache first, then first appearance), then budget (largest first).
 *
 * @throws LetheError `E_FORMAT` when `results` is not a `lethe-eval-results` v2 object or a
 *   cell is malformed (the argument names the field, e.g. `results.cells[3].metrics.accuracy`).
 */
export function reportRows(results: SweepResults): ReportRow[] {
  validateResults(results);
  const groups = new Map<string, CellResult[]>();
  for (const cell of results.cells) {
    const id = JSON.stringify([cell.key.task, cell.key.policy, cell.key.budget]);
    const group = groups.get(id);
    if (group === undefined) groups.set(id, [cell]);
    else group.push(cell);
  }
  const taskOrder = firstAppearance(results.cells.map((cell) => cell.key.task));
  const policyOrder = policyOrdering(results.cells.map((cell) => cell.key.policy));
  const rows = [...groups.values()].map(poolRow);
  return rows.sort(
    (a, b) =>
      taskOrder.get(a.task)! - taskOrder.get(b.task)! ||
      policyOrder.get(a.policy)! - policyOrder.get(b.policy)! ||
      b.budget - a.budget,
  );
}

/**
 * Policies in report order: the full cache first, then by first appearance.
 * Returns a map from policy name to rank.
 */
export function policyOrdering(policies: readonly string[]): Map<string, number> {
  return firstAppearance(policies.includes(FULL_CACHE) ? [FULL_CACHE, ...policies] : [...policies]);
}

function firstAppearance(names: readonly string[]): Map<string, number> {
  const order = new Map<string, number>();
  for (const name of names) if (!order.has(name)) order.set(name, order.size);
  return order;
}

/**
 * A row's metrics, each from `metric` (the required ones — `meanLive`, `peakLive`,
 * `tokensPerSecond` — must be given).
 */
export function rowMetrics(metric: (name: keyof RowMetrics) => Aggregate | undefined): RowMetrics {
  return {
    accuracy: metric('accuracy'),
    perplexity: metric('perplexity'),
    peakKvReduction: metric('peakKvReduction'),
    meanLive: metric('meanLive')!,
    peakLive: metric('peakLive')!,
    peakKvBytes: metric('peakKvBytes'),
    netKeepRate: metric('netKeepRate'),
    realisedBudget: metric('realisedBudget'),
    tokensPerSecond: metric('tokensPerSecond')!,
  };
}

function poolRow(cells: readonly CellResult[]): ReportRow {
  const sorted = [...cells].sort((a, b) => a.key.seed - b.key.seed);
  const pool = (name: keyof RowMetrics): Aggregate | undefined => {
    const parts = sorted.flatMap((cell) => cell.metrics[name] ?? []);
    // A metric some seeds' cells lack (written before it existed) is not pooled from the others.
    return parts.length < sorted.length ? undefined : poolAggregates(parts);
  };
  const metrics = rowMetrics(pool);
  const { task, policy, budget } = sorted[0]!.key;
  return {
    task,
    policy,
    budget,
    seeds: sorted.map((cell) => cell.key.seed),
    metrics,
    commands: sorted.map((cell) => cell.command),
    ...poolOutcomes(sorted),
  };
}

function poolOutcomes(cells: readonly CellResult[]): Pick<ReportRow, 'outcomes'> {
  let correct = 0;
  let total = 0;
  for (const cell of cells) {
    const sequences = cell.sequences;
    if (sequences === undefined || sequences.length === 0) return {};
    if (new Set(sequences.map((sequence) => sequence.example)).size !== sequences.length) return {};
    correct += sequences.filter((sequence) => sequence.correct).length;
    total += sequences.length;
  }
  return { outcomes: { correct, total } };
}

function validateResults(results: SweepResults): void {
  if (
    typeof results !== 'object' ||
    results === null ||
    results.format !== RESULTS_FORMAT ||
    results.version !== RESULTS_VERSION ||
    !Array.isArray(results.cells)
  ) {
    throw new LetheError(
      'E_FORMAT',
      `expected a ${RESULTS_FORMAT} v${RESULTS_VERSION} object with a cells array`,
      'results',
    );
  }
  results.cells.forEach((cell, i) => {
    const at = `results.cells[${i}]`;
    const key = cell?.key;
    if (typeof key?.task !== 'string' || typeof key.policy !== 'string') {
      throw new LetheError('E_FORMAT', 'task and policy must be strings', `${at}.key`);
    }
    if (!Number.isFinite(key.budget) || !Number.isInteger(key.seed)) {
      throw new LetheError('E_FORMAT', 'budget must be finite and seed an integer', `${at}.key`);
    }
    if (typeof cell.command !== 'string') {
      throw new LetheError('E_FORMAT', 'must be a string', `${at}.command`);
    }
    const sequences: unknown = cell.sequences;
    if (sequences !== undefined) {
      if (!Array.isArray(sequences)) {
        throw new LetheError('E_FORMAT', 'must be an array', `${at}.sequences`);
      }
      sequences.forEach((sequence: Partial<SequenceOutcome> | null, j) => {
        if (
          !Number.isInteger(sequence?.example) ||
          sequence!.example! < 0 ||
          typeof sequence!.correct !== 'boolean'
        ) {
          throw new LetheError(
            'E_FORMAT',
            'must be {example: integer ≥ 0, correct: boolean, …}',
            `${at}.sequences[${j}]`,
          );
        }
      });
    }
    for (const name of [...REQUIRED_METRICS, ...OPTIONAL_METRICS]) {
      const value = cell.metrics?.[name];
      const required = (REQUIRED_METRICS as readonly string[]).includes(name);
      if ((value !== undefined || required) && !isAggregate(value)) {
        throw new LetheError(
          'E_FORMAT',
          'must be an aggregate {mean, stderr ≥ 0, n ≥ 1}',
          `${at}.metrics.${name}`,
        );
      }
    }
  });
}
