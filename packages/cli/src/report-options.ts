import {
  compareToBestHeuristic,
  leaderboardRoles,
  type ReportOptions,
  type SweepConfig,
  type SweepResults,
} from '@lethe/eval';
import type { PolicyRegistry } from '@lethe/kv-cache';

/**
 * The report options of a sweep, by what `registry` says of its policies (`leaderboardRoles`):
 * its memory policies compared with the best heuristic at each budget (`compareToBestHeuristic`:
 * paired, Holm-adjusted, α = 0.05), and its compute policies plotted against their net keep-rate.
 */
export function reportOptions(
  results: SweepResults,
  config: SweepConfig,
  registry: PolicyRegistry,
): ReportOptions {
  const { heuristics, compared, compute } = leaderboardRoles(config, registry);
  return {
    comparisons: compareToBestHeuristic(results, { heuristics, compared }),
    computePolicies: compute,
  };
}
