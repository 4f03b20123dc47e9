import { FULL_CACHE } from '@lethe/kv-cache';
import type { Aggregate } from '../harness/results';

/** Placeholder for a metric a row does not have. */
export const MISSING = '—';

/** `mean ± stderr` with `digits` decimals; `scale` multiplies both (100 for percentages). */
export function formatAggregate(
  value: Aggregate | undefined,
  digits: number,
  { scale = 1, unit = '' }: { scale?: number; unit?: string } = {},
): string {
  if (value === undefined) return MISSING;
  return `${(value.mean * scale).toFixed(digits)}${unit} ± ${(value.stderr * scale).toFixed(digits)}`;
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
