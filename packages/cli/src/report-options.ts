import { bareMessage, LetheError } from '@lethe/core';
import {
  compareToBestHeuristic,
  leaderboardRoles,
  type ReportOptions,
  reportRows,
  type SweepConfig,
  type SweepResults,
  suiteAverageRows,
} from '@lethe/eval';
import type { PolicyRegistry } from '@lethe/kv-cache';

/**
 * The report options of a sweep, by what `registry` says of its policies (`leaderboardRoles`):
 * its memory policies compared with the best heuristic at each budget (`compareToBestHeuristic`:
 * paired, Holm-adjusted, α = 0.05), and its compute policies and read selectors plotted against
 * their net keep-rate; given `averageOver` (`--average-over`, comma-separated task labels), the accuracy of those tasks
 * averaged per budget, shown first.
 *
 * @throws LetheError `E_ARG` naming `--average-over` (and the label at fault) when the labels
 *   cannot be averaged (see `suiteAverageRows`).
 */
export function reportOptions(
  results: SweepResults,
  config: SweepConfig,
  registry: PolicyRegistry,
  averageOver?: string,
): ReportOptions {
  const { heuristics, compared, compute } = leaderboardRoles(config, registry);
  return {
    comparisons: compareToBestHeuristic(results, { heuristics, compared }),
    computePolicies: compute,
    ...(averageOver === undefined ? {} : { averageOver: averageLabels(results, averageOver) }),
  };
}

/** The task labels of `--average-over`, checked to average (see `suiteAverageRows`). */
function averageLabels(results: SweepResults, flag: string): string[] {
  const labels = flag.split(',').map((label) => label.trim());
  try {
    suiteAverageRows(reportRows(results), labels);
  } catch (error) {
    if (!(error instanceof LetheError)) throw error;
    const index = /^tasks\[(\d+)\]$/.exec(error.argument ?? '')?.[1];
    const which = index === undefined ? '' : `${JSON.stringify(labels[Number(index)])}: `;
    throw new LetheError(error.code, `${which}${bareMessage(error)}`, '--average-over');
  }
  return labels;
}
