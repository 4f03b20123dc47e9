import { FULL_CACHE } from '@lethe/kv-cache';
import type { BaselineComparison } from './best-heuristic';
import { formatScore, formatScoreWithInterval, policyLabel } from './format';
import type { Score } from './score';
import { VERDICT_MARKS_NOTE, type VerdictMark, verdictMark } from './verdict-marks';
import type { ScoreView } from './views';

/**
 * A cell of a policy × budget table: the score, whether it is the best at its budget, and its
 * verdict against the best heuristic there (▲, ▼ or '').
 */
export interface CompactCell {
  readonly score: Score;
  readonly best: boolean;
  readonly mark: VerdictMark;
}

/** One policy's row of a policy × budget table. */
export interface CompactRow {
  readonly policy: string;
  /** Its display name, with the policies it equals: `l2norm (= knorm)`. */
  readonly label: string;
  /** One per budget column; undefined where the policy did not run. */
  readonly cells: readonly (CompactCell | undefined)[];
}

/** A task's score as a policy × budget table (the shape of the README's summary). */
export interface CompactTable {
  /** Column budgets, ascending. */
  readonly budgets: readonly number[];
  /**
   * Per column, the realised budgets of its memory policies' rows (compute policies and read
   * selectors keep the whole cache): `10.7%`, or `10.6–10.8%` when they differ.
   */
  readonly realised: readonly string[];
  /** The full cache's score, the reference every row is read against. */
  readonly full?: Score;
  readonly rows: readonly CompactRow[];
}

/**
 * The policy × budget table of a score view: a row per policy other than the full cache (whose
 * score is given apart), a column per budget. In each column the best score — highest
 * accuracy, lowest perplexity, compared as shown — is marked, unless every policy ties; each
 * cell carries its verdict in `comparisons` (see `verdictMark`). The realised budgets of a column
 * are those of its rows outside `computePolicies` (see `ReportOptions.computePolicies`).
 */
export function compactTable(
  view: ScoreView,
  comparisons: readonly BaselineComparison[] = [],
  computePolicies: readonly string[] = [],
): CompactTable {
  const { metric } = view;
  const evicting = view.rows.filter((entry) => entry.row.policy !== FULL_CACHE);
  const budgets = [...new Set(evicting.map((entry) => entry.row.budget))].sort((a, b) => a - b);
  const realised = budgets.map((budget) => {
    const values = evicting
      .filter((entry) => entry.row.budget === budget && !computePolicies.includes(entry.row.policy))
      .flatMap((entry) => entry.row.metrics.realisedBudget?.mean ?? []);
    if (values.length === 0) return '';
    const low = (Math.min(...values) * 100).toFixed(1);
    const high = (Math.max(...values) * 100).toFixed(1);
    return low === high ? `${low}%` : `${low}–${high}%`;
  });
  const best = budgets.map((budget) => {
    const shown = evicting
      .filter((entry) => entry.row.budget === budget)
      .map((entry) => formatScore(entry.score, metric));
    if (new Set(shown).size < 2) return undefined;
    const values = shown.map(Number.parseFloat);
    const top = metric.higherIsBetter ? Math.max(...values) : Math.min(...values);
    return shown[values.indexOf(top)];
  });
  const equals = new Map(
    view.identical.flatMap((group) =>
      group.map((policy) => [policy, group.filter((other) => other !== policy)] as const),
    ),
  );
  const policies = [...new Set(evicting.map((entry) => entry.row.policy))];
  const rows = policies.map((policy) => {
    const others = equals.get(policy);
    return {
      policy,
      label:
        others === undefined
          ? policyLabel(policy)
          : `${policyLabel(policy)} (= ${others.map(policyLabel).join(', ')})`,
      cells: budgets.map((budget, i) => {
        const entry = evicting.find(
          (candidate) => candidate.row.policy === policy && candidate.row.budget === budget,
        );
        if (entry === undefined) return undefined;
        return {
          score: entry.score,
          best: formatScore(entry.score, metric) === best[i],
          mark: verdictMark(comparisons, view.task, policy, budget),
        };
      }),
    };
  });
  const full = view.rows.find((entry) => entry.row.policy === FULL_CACHE)?.score;
  return { budgets, realised, ...(full === undefined ? {} : { full }), rows };
}

/**
 * The sentence that introduces a policy × budget table: the score and how it is written, and
 * the full cache's score to read the rows against.
 */
export function compactTableCaption(view: ScoreView, table: CompactTable): string {
  const { metric } = view;
  const full =
    table.full === undefined
      ? ''
      : ` Full cache (100%): ${formatScoreWithInterval(table.full, metric)}.`;
  const marked = table.rows.some((row) => row.cells.some((cell) => cell?.mark));
  return (
    `${metric.label} of ${view.task} by policy and budget (and the budget realised), each with ` +
    `its 95% confidence interval; the best at each budget in bold.${full}` +
    (marked ? ` ${VERDICT_MARKS_NOTE}` : '')
  );
}

/** The note under a table whose task has policies with identical results; empty without. */
export function identicalNote(view: ScoreView): string {
  if (view.identical.length === 0) return '';
  const groups = view.identical.map((group) => group.map(policyLabel).join(' = '));
  return (
    `Identical results at every budget (to the precision shown): ${groups.join('; ')}. ` +
    'The plots draw each group as one series.'
  );
}
