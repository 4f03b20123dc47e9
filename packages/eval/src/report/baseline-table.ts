import type { BaselineComparison } from './best-heuristic';
import { formatBudget } from './format';
import { VERDICT_MARKS } from './verdict-marks';

/** Header of the against-the-best-heuristic table. */
export const BASELINE_HEADER = [
  'budget',
  'policy',
  'score',
  'best heuristic',
  'its score',
  'paired examples',
  'test',
  'p',
  'Holm p',
  'verdict',
] as const;

/** Columns of {@link BASELINE_HEADER} holding numbers (right-aligned). */
export const BASELINE_NUMERIC: readonly boolean[] = BASELINE_HEADER.map(
  (column) => !['policy', 'best heuristic', 'test', 'verdict'].includes(column),
);

/** Verdicts as written: ▲ better than the best heuristic, ▼ worse, · not told apart. */
const MARKS = {
  better: `${VERDICT_MARKS.better} better`,
  worse: `${VERDICT_MARKS.worse} worse`,
  indistinguishable: '· not told apart',
};

/**
 * The rows (plain text, unescaped) of one task's comparisons with the best heuristic, by budget
 * (largest first) and then as given: accuracy in %, perplexity with 2 decimals, p-values with 2
 * significant digits.
 */
export function baselineRows(comparisons: readonly BaselineComparison[]): string[][] {
  return [...comparisons]
    .sort((a, b) => b.budget - a.budget)
    .map((c) => [
      formatBudget(c.budget),
      c.policy,
      scoreText(c, c.score),
      c.baseline,
      scoreText(c, c.baselineScore),
      String(c.n),
      c.test === 'mcnemar' ? 'McNemar (exact)' : 'paired bootstrap',
      pText(c.pValue),
      pText(c.adjustedP),
      MARKS[c.verdict],
    ]);
}

/** What the table tests and how many comparisons share an adjustment, for its caption. */
export function baselineCaption(alpha: number): string {
  return (
    'Each policy against the best heuristic at the same budget, on the same examples: exact ' +
    'McNemar on correctness (one sample per example), otherwise a paired bootstrap of ' +
    'per-document perplexity or per-example accuracy; the p-values of a task and budget are ' +
    `Holm-adjusted together, and a verdict needs an adjusted p ≤ ${alpha}.`
  );
}

function scoreText(c: BaselineComparison, value: number): string {
  return c.metric === 'accuracy' ? `${(100 * value).toFixed(1)}%` : value.toFixed(2);
}

function pText(p: number): string {
  return p >= 0.01 ? p.toFixed(2) : p.toExponential(1);
}
