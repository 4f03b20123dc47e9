import type { BaselineComparison } from './best-heuristic';

/** The mark of a verdict against the best heuristic: ▲ better, ▼ worse. */
export const VERDICT_MARKS = Object.freeze({ better: '▲', worse: '▼' });

/** A mark beside a score: ▲, ▼, or '' where the policy was not told apart or not compared. */
export type VerdictMark = '' | (typeof VERDICT_MARKS)[keyof typeof VERDICT_MARKS];

/**
 * The mark of `policy` at `task` and `budget`: ▲ where its comparison with the best heuristic
 * there (`compareToBestHeuristic`) found it better, ▼ worse, '' otherwise — so the plots and the
 * policy × budget tables show what the "Against the best heuristic" table tells.
 */
export function verdictMark(
  comparisons: readonly BaselineComparison[],
  task: string,
  policy: string,
  budget: number,
): VerdictMark {
  const found = comparisons.find(
    (c) => c.task === task && c.policy === policy && c.budget === budget,
  );
  if (found === undefined || found.verdict === 'indistinguishable') return '';
  return VERDICT_MARKS[found.verdict];
}

/** The sentence a caption adds where marks appear. */
export const VERDICT_MARKS_NOTE =
  '▲ / ▼: better / worse than the best heuristic at that budget on the same examples (paired test, Holm-adjusted; the table "Against the best heuristic").';
