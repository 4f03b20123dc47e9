import { LetheError } from '@lethe/core';
import type { Aggregate } from '../harness/results';
import { requireFinite, requireInteger, requireNonNegative } from '../metrics/validate';

/** A two-sided confidence interval around an estimate. */
export interface Interval {
  readonly low: number;
  readonly high: number;
}

/** Φ⁻¹(0.975): the standard normal quantile of a two-sided 95% interval. */
export const Z_95 = 1.959963984540054;

/** Degrees of freedom above which {@link studentT95} uses its large-ν expansion. */
const EXACT_DF_LIMIT = 1000;

/**
 * The Wilson score interval (95%) of a binomial proportion with `successes` out of `trials`:
 *
 * ```text
 * p̂ = k / n,   centre = (p̂ + z²/2n) / (1 + z²/n),
 * half-width = z / (1 + z²/n) · √(p̂(1 − p̂)/n + z²/4n²),   z = Φ⁻¹(0.975)
 * ```
 *
 * Unlike p̂ ± z·SE it stays inside [0, 1] and does not collapse to a point at 0 or n successes
 * (0 of n gives [0, z²/(n + z²)]).
 *
 * @throws LetheError `E_ARG` naming `trials` unless it is an integer ≥ 1, or `successes` unless
 *   it is an integer in [0, trials].
 */
export function wilsonInterval(successes: number, trials: number): Interval {
  requireInteger(trials, 1, 'trials');
  requireInteger(successes, 0, 'successes');
  if (successes > trials) {
    throw new LetheError('E_ARG', `must be ≤ trials (${trials}), got ${successes}`, 'successes');
  }
  const p = successes / trials;
  const z2 = Z_95 * Z_95;
  const denominator = 1 + z2 / trials;
  const centre = (p + z2 / (2 * trials)) / denominator;
  const half = (Z_95 / denominator) * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials ** 2));
  // At 0 or n successes one bound is exactly 0 or 1; rounding would leave it a hair off.
  return {
    low: successes === 0 ? 0 : centre - half,
    high: successes === trials ? 1 : centre + half,
  };
}

/**
 * The 97.5% quantile of Student's t distribution with `df` degrees of freedom: the factor of a
 * two-sided 95% interval mean ± t·SE. Exact (to floating-point bisection) for `df` ≤ 1000, by
 * inverting the closed-form distribution function of integer ν (Abramowitz & Stegun 26.7.3–4);
 * above, the Cornish–Fisher expansion z + (z³ + z)/4ν + (5z⁵ + 16z³ + 3z)/96ν², whose error there
 * is below 10⁻⁸.
 *
 * @throws LetheError `E_ARG` naming `df` unless it is an integer ≥ 1.
 */
export function studentT95(df: number): number {
  requireInteger(df, 1, 'df');
  if (df > EXACT_DF_LIMIT) {
    const z = Z_95;
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2);
  }
  // P(|T| ≤ t) increases with t; bisect for 0.95 between 0 and a bound that holds for ν ≥ 1.
  let low = 0;
  let high = 13;
  for (let i = 0; i < 200 && high - low > 1e-13; i++) {
    const mid = (low + high) / 2;
    if (centralMass(mid, df) < 0.95) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

/**
 * The 95% interval mean ± t·SE of an aggregate over `n` values (t with n − 1 degrees of
 * freedom, {@link studentT95}); a single value (n = 1) has no spread to go on and gives the
 * point itself.
 *
 * @throws LetheError `E_ARG` naming `value.mean`, `value.stderr` or `value.n` when the mean is
 *   not finite, the standard error negative or `n` not an integer ≥ 1.
 */
export function meanInterval(value: Aggregate): Interval {
  requireFinite(value.mean, 'value.mean');
  requireNonNegative(value.stderr, 'value.stderr');
  requireInteger(value.n, 1, 'value.n');
  const half = value.n === 1 ? 0 : studentT95(value.n - 1) * value.stderr;
  return { low: value.mean - half, high: value.mean + half };
}

/** P(|T| ≤ t) for Student's t with integer ν ≥ 1 (A&S 26.7.3 for odd ν, 26.7.4 for even ν). */
function centralMass(t: number, df: number): number {
  const theta = Math.atan(t / Math.sqrt(df));
  const sin = Math.sin(theta);
  const cos = Math.cos(theta);
  const cos2 = cos * cos;
  if (df % 2 === 1) {
    // (2/π)(θ + sin θ cos θ (1 + 2/3 cos²θ + 2·4/(3·5) cos⁴θ + … + 2·4⋯(ν−3)/(3·5⋯(ν−2)) cos^(ν−3)θ))
    if (df === 1) return (2 * theta) / Math.PI;
    let term = 1;
    let sum = 1;
    for (let k = 1; k <= (df - 3) / 2; k++) {
      term *= ((2 * k) / (2 * k + 1)) * cos2;
      sum += term;
    }
    return (2 / Math.PI) * (theta + sin * cos * sum);
  }
  // sin θ (1 + 1/2 cos²θ + 1·3/(2·4) cos⁴θ + … + 1·3⋯(ν−3)/(2·4⋯(ν−2)) cos^(ν−2)θ)
  let term = 1;
  let sum = 1;
  for (let k = 1; k <= (df - 2) / 2; k++) {
    term *= ((2 * k - 1) / (2 * k)) * cos2;
    sum += term;
  }
  return sin * sum;
}
