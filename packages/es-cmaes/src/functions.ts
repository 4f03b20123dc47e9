/**
 * Classic test functions for black-box optimisers (minimum 0). Useful to try settings and in
 * benchmarks; each takes any `ArrayLike<number>` of length n ≥ 1 (Rosenbrock: n ≥ 2).
 */

/** Sphere: Σ x_i². Minimum 0 at 0. */
export function sphere(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]! * x[i]!;
  return s;
}

/**
 * Ellipsoid with condition number 10⁶: Σ 10^(6(i−1)/(n−1)) x_i² (i = 1 … n; n = 1 is the
 * sphere). Minimum 0 at 0.
 */
export function ellipsoid(x: ArrayLike<number>): number {
  const n = x.length;
  let s = 0;
  for (let i = 0; i < n; i++) s += 10 ** (n === 1 ? 0 : (6 * i) / (n - 1)) * x[i]! * x[i]!;
  return s;
}

/** Rosenbrock: Σ 100 (x_i² − x_{i+1})² + (x_i − 1)². Minimum 0 at (1, …, 1). */
export function rosenbrock(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length - 1; i++) {
    const a = x[i]! * x[i]! - x[i + 1]!;
    const b = x[i]! - 1;
    s += 100 * a * a + b * b;
  }
  return s;
}

/** Rastrigin: 10n + Σ (x_i² − 10 cos 2πx_i). Highly multimodal; minimum 0 at 0. */
export function rastrigin(x: ArrayLike<number>): number {
  let s = 10 * x.length;
  for (let i = 0; i < x.length; i++) s += x[i]! * x[i]! - 10 * Math.cos(2 * Math.PI * x[i]!);
  return s;
}
