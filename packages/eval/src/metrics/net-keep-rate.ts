import { LetheError } from '@lethe/core';
import {
  requireFraction,
  requireInteger,
  requireNonEmpty,
  requireNonNegative,
  requirePositive,
  requireSameLength,
} from './validate';

/**
 * Realised episode-average keep rates on SOL's (Self-Optimizing Language Models) efficiency
 * axes. Leave out the axes a method does not control; an eviction policy only has `attention`.
 */
export interface NetKeepAxes {
  /** κ̄: realised token-attention keep-rate (fraction of available keys read). */
  readonly attention?: number;
  /** ρ̄: realised structured MLP-channel keep-rate. */
  readonly mlp?: number;
  /** η̄ = q̄ / 16: realised normalised activation precision (see {@link normalisedPrecision}). */
  readonly precision?: number;
}

/**
 * SOL's net keep-rate of an episode: the mean of the realised keep-rates over the enabled
 * efficiency axes,
 *
 * ```text
 * NetKeep = (κ̄ + ρ̄ + η̄) / 3          (all three axes enabled)
 * ```
 *
 * and, as SOL specifies, the average over the enabled subset otherwise (so with only token
 * sparsity, NetKeep = κ̄). Lower means more aggressive compression; the full cache has 1.
 *
 * @throws LetheError `E_ARG` when no axis is given (argument `axes`) or an axis is not in
 *   [0, 1] (argument `axes.attention`, `axes.mlp` or `axes.precision`).
 */
export function netKeepRate(axes: NetKeepAxes): number {
  const enabled: number[] = [];
  for (const name of ['attention', 'mlp', 'precision'] as const) {
    const value = axes[name];
    if (value !== undefined) enabled.push(requireFraction(value, `axes.${name}`));
  }
  if (enabled.length === 0) {
    throw new LetheError('E_ARG', 'needs at least one of attention, mlp, precision', 'axes');
  }
  return enabled.reduce((sum, value) => sum + value, 0) / enabled.length;
}

/**
 * SOL's realised episode average of a per-step keep fraction (eq. 2), counting only the
 * effective steps, those where the controllable region beyond the always-kept sink/window
 * tokens is non-empty:
 *
 * ```text
 * κ̄ = Σₜ 1_eff,t κ(aₜ) / Σₜ 1_eff,t
 * ```
 *
 * The same average gives ρ̄ and η̄ from their per-step values. This is the *realised* rate, to be
 * compared with the *requested* target (the sweep's `budget`).
 *
 * @param perStep - per-step keep fractions κ(aₜ) in [0, 1].
 * @param effective - per-step flags 1_eff,t; every step counts when omitted.
 * @throws LetheError `E_ARG` for an empty array, a value outside [0, 1] (naming `perStep[t]`),
 *   or no effective step (argument `effective`); `E_SHAPE` when the lengths differ.
 */
export function realisedKeepRate(
  perStep: readonly number[],
  effective?: readonly boolean[],
): number {
  requireNonEmpty(perStep, 'perStep');
  if (effective !== undefined) requireSameLength(perStep, 'perStep', effective, 'effective');
  let sum = 0;
  let steps = 0;
  perStep.forEach((value, t) => {
    requireFraction(value, `perStep[${t}]`);
    if (effective === undefined || effective[t] === true) {
      sum += value;
      steps += 1;
    }
  });
  if (steps === 0) throw new LetheError('E_ARG', 'has no effective step', 'effective');
  return sum / steps;
}

/**
 * Per-step token-attention keep fractions κₜ = keptₜ / availableₜ, where `availableₜ` is the
 * number of keys the full cache would attend to at step `t` (SOL's Kₜ) and `keptₜ` the number
 * actually read. Feed the result to {@link realisedKeepRate}.
 *
 * @throws LetheError `E_ARG` for empty arrays, negative or NaN counts, `availableₜ ≤ 0` or
 *   `keptₜ > availableₜ` (naming `kept[t]` / `available[t]`); `E_SHAPE` when the lengths differ.
 */
export function keepFractions(kept: readonly number[], available: readonly number[]): number[] {
  requireNonEmpty(kept, 'kept');
  requireNonEmpty(available, 'available');
  requireSameLength(kept, 'kept', available, 'available');
  return kept.map((count, t) => {
    const total = requirePositive(available[t]!, `available[${t}]`);
    if (requireNonNegative(count, `kept[${t}]`) > total) {
      throw new LetheError(
        'E_ARG',
        `must be ≤ available[${t}] (${total}), got ${count}`,
        `kept[${t}]`,
      );
    }
    return count / total;
  });
}

/**
 * SOL's normalised activation precision η = q / 16 for a `q`-bit activation quantisation.
 *
 * @throws LetheError `E_ARG` unless `bits` is an integer in [1, 16].
 */
export function normalisedPrecision(bits: number): number {
  requireInteger(bits, 1, 'bits');
  if (bits > 16) throw new LetheError('E_ARG', `must be ≤ 16, got ${bits}`, 'bits');
  return bits / 16;
}
