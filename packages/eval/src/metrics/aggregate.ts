import { LetheError } from '@lethe/core';
import type { Aggregate } from '../harness/results';
import { requireFinite, requireInteger, requireNonEmpty, requireNonNegative } from './validate';

/**
 * Mean ± standard error of the mean of `values`:
 *
 * ```text
 * mean   = (1/n) Σ xᵢ
 * stderr = s / √n,   s² = Σ (xᵢ − mean)² / (n − 1)   (sample variance; stderr = 0 when n = 1)
 * ```
 *
 * @throws LetheError `E_ARG` for an empty array, or naming `values[i]` for NaN or ±Infinity.
 */
export function aggregate(values: readonly number[]): Aggregate {
  requireNonEmpty(values, 'values');
  const n = values.length;
  let sum = 0;
  values.forEach((value, i) => {
    sum += requireFinite(value, `values[${i}]`);
  });
  const mean = sum / n;
  if (n === 1) return { mean, stderr: 0, n };
  let squares = 0;
  for (const value of values) squares += (value - mean) ** 2;
  return { mean, stderr: Math.sqrt(squares / (n - 1) / n), n };
}

/**
 * Whether `value` has the shape of an {@link Aggregate} that {@link poolAggregates} accepts: a
 * finite `mean`, a finite `stderr` ≥ 0 (0 when `n` = 1) and an integer `n` ≥ 1. For data read
 * from files, which TypeScript cannot vouch for.
 */
export function isAggregate(value: unknown): value is Aggregate {
  if (typeof value !== 'object' || value === null) return false;
  const { mean, stderr, n } = value as Record<string, unknown>;
  return (
    typeof mean === 'number' &&
    Number.isFinite(mean) &&
    typeof stderr === 'number' &&
    Number.isFinite(stderr) &&
    stderr >= 0 &&
    typeof n === 'number' &&
    Number.isInteger(n) &&
    n >= 1 &&
    (n > 1 || stderr === 0)
  );
}

/**
 * Pools aggregates of disjoint groups (for example the seeds of one sweep cell) into the
 * aggregate of all their values, exactly as {@link aggregate} would compute it on the
 * concatenated values. With group sample variances `sᵢ² = stderrᵢ² · nᵢ`:
 *
 * ```text
 * N = Σ nᵢ,   mean = Σ nᵢ meanᵢ / N
 * s² = (Σ (nᵢ − 1) sᵢ² + Σ nᵢ (meanᵢ − mean)²) / (N − 1),   stderr = s / √N
 * ```
 *
 * @throws LetheError `E_ARG` for an empty list, a non-finite mean, a negative or non-finite
 *   stderr, or an `n` that is not an integer ≥ 1 (naming `parts[i].field`).
 */
export function poolAggregates(parts: readonly Aggregate[]): Aggregate {
  requireNonEmpty(parts, 'parts');
  let total = 0;
  let weighted = 0;
  parts.forEach((part, i) => {
    requireInteger(part.n, 1, `parts[${i}].n`);
    requireFinite(part.mean, `parts[${i}].mean`);
    requireNonNegative(part.stderr, `parts[${i}].stderr`);
    if (part.n === 1 && part.stderr !== 0) {
      throw new LetheError('E_ARG', 'must be 0 for a single value (n = 1)', `parts[${i}].stderr`);
    }
    total += part.n;
    weighted += part.n * part.mean;
  });
  const mean = weighted / total;
  if (total === 1) return { mean, stderr: 0, n: 1 };
  let squares = 0;
  for (const part of parts) {
    squares += (part.n - 1) * part.stderr ** 2 * part.n + part.n * (part.mean - mean) ** 2;
  }
  return { mean, stderr: Math.sqrt(squares / (total - 1) / total), n: total };
}
