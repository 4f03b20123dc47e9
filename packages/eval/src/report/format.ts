import { FULL_CACHE } from '@lethe/kv-cache';
import type { Aggregate } from '../harness/results';
import type { Score, ScoreMetric } from './score';

/** Placeholder for a metric a row does not have. */
export const MISSING = '—';

/** The mean of an aggregate with `digits` decimals; `scale` multiplies it (100 for percentages). */
export function formatMean(
  value: Aggregate | undefined,
  digits: number,
  { scale = 1, unit = '' }: { scale?: number; unit?: string } = {},
): string {
  if (value === undefined) return MISSING;
  return `${(value.mean * scale).toFixed(digits)}${unit}`;
}

/** A score's mean in its metric's units (`59.4%`, `1.92`). */
export function formatScore(score: Score, metric: ScoreMetric): string {
  return `${score.mean.toFixed(metric.digits)}${metric.unit}`;
}

/** A score's 95% interval as `low–high` without unit (`42.3–74.5`). */
export function formatInterval(score: Score, metric: ScoreMetric): string {
  const { low, high } = score.interval;
  return `${low.toFixed(metric.digits)}–${high.toFixed(metric.digits)}`;
}

/** A score with its 95% interval: `59.4% (42.3–74.5)`; {@link MISSING} without one. */
export function formatScoreWithInterval(score: Score | undefined, metric: ScoreMetric): string {
  if (score === undefined) return MISSING;
  return `${formatScore(score, metric)} (${formatInterval(score, metric)})`;
}

/** A count-like mean: no decimals when it is an integer, one otherwise. */
export function formatCount(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

/** A budget fraction as a percentage without trailing zeros (0.25 → `25%`). */
export function formatBudget(budget: number): string {
  return `${Number((budget * 100).toFixed(2))}%`;
}

/** Display name of a policy (`full` is the full cache). */
export function policyLabel(policy: string): string {
  return policy === FULL_CACHE ? 'full cache' : policy;
}
