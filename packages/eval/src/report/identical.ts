import { FULL_CACHE } from '@lethe/kv-cache';
import { formatBudget, formatCount, formatInterval, formatScore } from './format';
import type { ScoreMetric } from './score';
import type { ScoredRow } from './views';

/**
 * Groups of policies with identical results, to the precision the report shows, at every
 * budget: the same budgets, and at each the same realised budget (0.1 point), mean and peak
 * live KV entries, net keep-rate, score and 95% interval — policies that kept the same entries,
 * not merely ones that scored alike (those are told apart by their markers, set side by side
 * where they coincide). Drawn separately, identical series would hide one another, so the
 * report draws them once and names them together ("knorm = l2norm"). Each group lists its
 * policies in `rows` order; the full cache and policies without an equal are left out.
 */
export function identicalGroups(rows: readonly ScoredRow[], metric: ScoreMetric): string[][] {
  const byPolicy = new Map<string, ScoredRow[]>();
  for (const entry of rows) {
    if (entry.row.policy === FULL_CACHE) continue;
    byPolicy.set(entry.row.policy, [...(byPolicy.get(entry.row.policy) ?? []), entry]);
  }
  const groups = new Map<string, string[]>();
  for (const [policy, entries] of byPolicy) {
    const fingerprint = JSON.stringify(
      [...entries]
        .sort((a, b) => a.row.budget - b.row.budget)
        .map(({ row, score }) => [
          formatBudget(row.budget),
          row.metrics.realisedBudget === undefined
            ? null
            : (row.metrics.realisedBudget.mean * 100).toFixed(1),
          formatCount(row.metrics.meanLive.mean),
          formatCount(row.metrics.peakLive.mean),
          row.metrics.netKeepRate?.mean.toFixed(3) ?? null,
          formatScore(score, metric),
          formatInterval(score, metric),
        ]),
    );
    groups.set(fingerprint, [...(groups.get(fingerprint) ?? []), policy]);
  }
  return [...groups.values()].filter((group) => group.length > 1);
}
