import { assertLength, LetheError } from '@lethe/core';
import { MAGNITUDE_LIMIT } from './json';

/**
 * Box bounds l ≤ x ≤ u, handled by mirroring (default) or by resampling ({@link BoundHandling}).
 *
 * Mirroring: CMA-ES samples its candidates unconstrained (the "genotype" x); the candidate
 * returned by `ask` and evaluated by f is the mirror image of x into the box (the
 * "phenotype"): each coordinate outside [l_i, u_i] is reflected at the bound it crossed,
 * repeatedly (periodically, with period 2(u_i − l_i)) when it lies more than one box width
 * outside. A one-sided bound (the other side ±Infinity) reflects once. The distribution is
 * updated with the unconstrained samples, so the update equations are those of the unbounded
 * algorithm on the function f ∘ mirror, which is continuous and equals f inside the box; an
 * optimum on a bound becomes a V-shaped fold, which ranking-based CMA-ES handles. f is only
 * ever evaluated inside the box.
 */
export interface Bounds {
  /** l, length n; −Infinity where unbounded below. */
  readonly lower: Float64Array;
  /** u, length n; +Infinity where unbounded above. */
  readonly upper: Float64Array;
}

/** Bounds as given: one number for every coordinate, or one per coordinate. */
export type BoundsInput = number | ArrayLike<number>;

/**
 * Resolves and checks box bounds; `undefined` when neither side bounds anything.
 *
 * @throws LetheError `E_SHAPE` naming `lower` / `upper` (an array whose length is not n);
 * `E_ARG` naming `lower` / `upper` (NaN, l_i = +Infinity, u_i = −Infinity, or a finite bound
 * beyond ±10³², {@link MAGNITUDE_LIMIT}) or `upper` (some u_i < l_i).
 */
export function resolveBounds(
  lower: BoundsInput | undefined,
  upper: BoundsInput | undefined,
  dimension: number,
): Bounds | undefined {
  const lo = expand(lower, Number.NEGATIVE_INFINITY, dimension, 'lower');
  const hi = expand(upper, Number.POSITIVE_INFINITY, dimension, 'upper');
  let any = false;
  for (let i = 0; i < dimension; i++) {
    if (lo[i] === Number.POSITIVE_INFINITY) {
      throw new LetheError('E_ARG', `lower[${i}] is +Infinity`, 'lower');
    }
    if (hi[i] === Number.NEGATIVE_INFINITY) {
      throw new LetheError('E_ARG', `upper[${i}] is -Infinity`, 'upper');
    }
    for (const [name, v] of [
      ['lower', lo[i]!],
      ['upper', hi[i]!],
    ] as const) {
      if (Number.isFinite(v) && Math.abs(v) > MAGNITUDE_LIMIT) {
        throw new LetheError('E_ARG', `${name}[${i}] = ${v} lies beyond ±${MAGNITUDE_LIMIT}`, name);
      }
    }
    if (hi[i]! < lo[i]!) {
      throw new LetheError('E_ARG', `upper[${i}] = ${hi[i]} < lower[${i}] = ${lo[i]}`, 'upper');
    }
    if (Number.isFinite(lo[i]!) || Number.isFinite(hi[i]!)) any = true;
  }
  return any ? { lower: lo, upper: hi } : undefined;
}

function expand(
  value: BoundsInput | undefined,
  fallback: number,
  dimension: number,
  argument: string,
): Float64Array {
  const out = new Float64Array(dimension);
  if (value === undefined || typeof value === 'number') {
    const v = value ?? fallback;
    if (Number.isNaN(v)) throw new LetheError('E_ARG', 'is NaN', argument);
    out.fill(v);
    return out;
  }
  assertLength(value, dimension, argument);
  for (let i = 0; i < dimension; i++) {
    const v = value[i];
    if (typeof v !== 'number' || Number.isNaN(v)) {
      throw new LetheError('E_ARG', `entry ${i} is ${String(v)}`, argument);
    }
    out[i] = v;
  }
  return out;
}

/** Whether every coordinate of `x` lies in [l_i, u_i]. */
export function insideBounds(x: ArrayLike<number>, bounds: Bounds): boolean {
  for (let i = 0; i < x.length; i++) {
    if (!(x[i]! >= bounds.lower[i]! && x[i]! <= bounds.upper[i]!)) return false;
  }
  return true;
}

/** Whether every coordinate is bounded on both sides (so a uniform draw in the box exists). */
export function isFiniteBox(bounds: Bounds | undefined): bounds is Bounds {
  if (bounds === undefined) return false;
  for (let i = 0; i < bounds.lower.length; i++) {
    if (!Number.isFinite(bounds.lower[i]!) || !Number.isFinite(bounds.upper[i]!)) return false;
  }
  return true;
}

/**
 * Writes the mirror image of `x` into the box to `out` (may be `x` itself) and returns `out`.
 * Coordinates inside the box are copied unchanged.
 */
export function mirrorIntoBounds(
  x: ArrayLike<number>,
  bounds: Bounds,
  out: Float64Array,
): Float64Array {
  const { lower, upper } = bounds;
  for (let i = 0; i < out.length; i++) {
    const l = lower[i]!;
    const u = upper[i]!;
    let v = x[i]!;
    if (v < l || v > u) {
      if (l === u) v = l;
      else if (l === Number.NEGATIVE_INFINITY) v = 2 * u - v;
      else if (u === Number.POSITIVE_INFINITY) v = 2 * l - v;
      else {
        const width = u - l;
        let t = (v - l) % (2 * width);
        if (t < 0) t += 2 * width;
        if (t > width) t = 2 * width - t;
        v = l + t;
      }
      // Guard against rounding just outside the box.
      v = Math.min(u, Math.max(l, v));
    }
    out[i] = v;
  }
  return out;
}

/**
 * How candidates that fall outside the bounds are handled:
 *
 * - `mirror`: reflected into the box (see {@link Bounds} and {@link mirrorIntoBounds}); the
 *   update uses the unconstrained samples, i.e. the plain algorithm on f ∘ mirror.
 * - `resample`: redrawn from the same distribution until inside the box, at most
 *   `maxResamples` times, as CyberAgentAILab `cmaes` does (its `n_max_resampling`); a candidate
 *   still outside after that is clipped into the box ({@link clipIntoBounds}) and enters the
 *   update as an injected solution. The update then sees the normal distribution truncated to
 *   the box. Coordinates with l_i = u_i are pinned to l_i, as when mirroring, and never cause a
 *   redraw.
 */
export type BoundHandling = 'mirror' | 'resample';

/**
 * Whether `x` lies in the box on every coordinate with l_i < u_i (coordinates with l_i = u_i
 * are ignored: {@link clipIntoBounds} pins them).
 */
export function insideFreeCoordinates(x: ArrayLike<number>, bounds: Bounds): boolean {
  const { lower, upper } = bounds;
  for (let i = 0; i < x.length; i++) {
    const l = lower[i]!;
    const u = upper[i]!;
    if (l !== u && !(x[i]! >= l && x[i]! <= u)) return false;
  }
  return true;
}

/**
 * Writes x clipped into the box, min(u_i, max(l_i, x_i)), to `out` (may be `x` itself) and
 * returns `out`.
 */
export function clipIntoBounds(
  x: ArrayLike<number>,
  bounds: Bounds,
  out: Float64Array,
): Float64Array {
  const { lower, upper } = bounds;
  for (let i = 0; i < out.length; i++) out[i] = Math.min(upper[i]!, Math.max(lower[i]!, x[i]!));
  return out;
}
