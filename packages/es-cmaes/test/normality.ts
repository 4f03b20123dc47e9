/**
 * Reference functions for testing normal samplers: the N(0, 1) CDF to about 1e-15 (absolute;
 * relative in the upper tail), sample moments, and the Kolmogorov–Smirnov and chi-square
 * statistics with their critical values at α = 10⁻⁴ (a fixed seed's check of a correct sampler
 * then fails with probability 10⁻⁴; the tests show each check failing on a flawed sample).
 */

const SQRT_PI = Math.sqrt(Math.PI);

/**
 * erfc(t) for t ≥ 0: 1 − erf(t) with erf(t) = (2/√π) e^(−t²) Σₙ 2ⁿ t^(2n+1) / (1·3·…·(2n+1))
 * (positive terms, no cancellation) for t ≤ 3; beyond, the continued fraction
 * erfc(t) = e^(−t²)/√π · 1/(t + ½/(t + 1/(t + (3/2)/(t + …)))), evaluated from 80 levels down.
 */
function erfcPositive(t: number): number {
  if (t <= 3) {
    let term = t;
    let sum = t;
    for (let n = 1; term > 1e-17 * sum; n++) {
      term *= (2 * t * t) / (2 * n + 1);
      sum += term;
    }
    return 1 - (2 / SQRT_PI) * Math.exp(-t * t) * sum;
  }
  let fraction = t;
  for (let k = 80; k >= 1; k--) fraction = t + k / 2 / fraction;
  return Math.exp(-t * t) / SQRT_PI / fraction;
}

/** Q(x) = P(Z > x) for Z ~ N(0, 1), accurate relative to its value for x ≥ 0. */
export function normalUpperTail(x: number): number {
  const t = x / Math.SQRT2;
  return t >= 0 ? erfcPositive(t) / 2 : 1 - erfcPositive(-t) / 2;
}

/** Φ(x) = P(Z ≤ x). */
export function normalCdf(x: number): number {
  return x < 0 ? normalUpperTail(-x) : 1 - normalUpperTail(x);
}

/** The raw sample moments E[z], E[z²], E[z³], E[z⁴], E[z⁶]. */
export function moments(z: Float64Array): [number, number, number, number, number] {
  let m1 = 0;
  let m2 = 0;
  let m3 = 0;
  let m4 = 0;
  let m6 = 0;
  for (const v of z) {
    const v2 = v * v;
    m1 += v;
    m2 += v2;
    m3 += v2 * v;
    m4 += v2 * v2;
    m6 += v2 * v2 * v2;
  }
  const n = z.length;
  return [m1 / n, m2 / n, m3 / n, m4 / n, m6 / n];
}

/** The KS statistic sup |F_n − F| of a sample against the CDF `cdf` (the sample is copied). */
export function ksStatistic(sample: Float64Array, cdf: (x: number) => number): number {
  const sorted = sample.slice().sort();
  const n = sorted.length;
  let d = 0;
  for (let i = 0; i < n; i++) {
    const f = cdf(sorted[i]!);
    d = Math.max(d, f - i / n, (i + 1) / n - f);
  }
  return d;
}

/** The asymptotic KS critical value at α = 10⁻⁴ for a sample of n: √(−ln(α/2)/2)/√n. */
export function ksCritical(n: number): number {
  return Math.sqrt(-Math.log(0.00005) / 2) / Math.sqrt(n);
}

/**
 * Pearson's chi-square of a sample against N(0, 1) over 82 bins — (−∞, −4), 80 of width 0.1
 * across [−4, 4), [4, ∞) — and the statistic's critical value at α = 10⁻⁴ for 81 degrees of
 * freedom (Wilson–Hilferty).
 */
export function chiSquareNormal(z: Float64Array): { statistic: number; critical: number } {
  const inner = 80;
  const counts = new Float64Array(inner + 2);
  for (const v of z) {
    const bin = v < -4 ? 0 : v >= 4 ? inner + 1 : 1 + Math.min(inner - 1, Math.floor((v + 4) * 10));
    counts[bin]! += 1;
  }
  let statistic = 0;
  for (let b = 0; b < inner + 2; b++) {
    const lo = b === 0 ? Number.NEGATIVE_INFINITY : -4 + (b - 1) / 10;
    const hi = b === inner + 1 ? Number.POSITIVE_INFINITY : -4 + b / 10;
    const p =
      (hi === Number.POSITIVE_INFINITY ? 1 : normalCdf(hi)) -
      (lo === Number.NEGATIVE_INFINITY ? 0 : normalCdf(lo));
    const expected = p * z.length;
    statistic += (counts[b]! - expected) ** 2 / expected;
  }
  const df = inner + 1;
  const zAlpha = 3.719; // the standard normal's 1 − 10⁻⁴ quantile
  const critical = df * (1 - 2 / (9 * df) + zAlpha * Math.sqrt(2 / (9 * df))) ** 3;
  return { statistic, critical };
}
